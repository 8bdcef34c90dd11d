#!/usr/bin/env bash
# A fully cached rerun of an unchanged N-task plan (default 1000) next to
# Turborepo's full-cache run of an N-package workspace, in the same run.
#
#   bench/cached.sh [N] [RUNS]
#   NO_TURBO=1 TASKS=true bench/cached.sh 100000 3
#       loopc alone, tasks that run `true` (the 100,000-task target; the
#       first run, which fills the cache, takes about 20 minutes on 2 cores)
#
# loopc: N independent command tasks (bench/command_plan.sh), run once to fill the
# cache, then `loopc run` timed. Turborepo: N npm workspace packages, each
# with a `build` script writing one file (its output), `turbo run build`
# once to fill its local cache, then timed (every task a cache hit). Both
# are timed by hyperfine (wall) and GNU time (CPU = user + system, peak RSS).
# Needs hyperfine, GNU time, git, node and npm; `turbo` comes from the npm
# registry (`npm install turbo@2` into a scratch directory, unless TURBO
# names a binary). Writes bench/results/cached.md. Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${1:-1000}
runs=${2:-10}
for tool in hyperfine /usr/bin/time git node npm; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool" >&2; exit 2; }
done
loopc=${LOOPC:-$root/target/release/loopc}
[[ -x $loopc ]] || cargo build --release --quiet --bin loopc
work=$(mktemp -d "${TMPDIR:-/tmp}/loopc-cached-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
turbo=${TURBO:-}
no_turbo=${NO_TURBO:-}
if [[ -z $turbo && -z $no_turbo ]]; then
  (cd "$work" && npm init -y >/dev/null && npm install --silent turbo@2 >/dev/null)
  turbo=$work/node_modules/.bin/turbo
fi

# loopc's plan.
repo=$work/loopc
source "$root/bench/command_plan.sh"
command_plan "$repo" cached "$n" 8
"$loopc" run plan.loop >/dev/null 2>&1

# Turborepo's workspace.
ws=$work/turbo
if [[ -z $no_turbo ]]; then
mkdir -p "$ws/packages" && cd "$ws"
git init -q -b main && git config user.email b@loopc.invalid && git config user.name bench
npm_version=$(npm --version)
cat > package.json <<JSON
{ "name": "bench", "private": true, "packageManager": "npm@$npm_version",
  "workspaces": ["packages/*"] }
JSON
cat > turbo.json <<'JSON'
{ "$schema": "https://turborepo.com/schema.json",
  "tasks": { "build": { "outputs": ["out.txt"] } } }
JSON
for i in $(seq 0 $((n - 1))); do
  mkdir -p "packages/p$i"
  printf '{ "name": "p%d", "version": "1.0.0", "scripts": { "build": "echo %d > out.txt" } }\n' "$i" "$i" \
    > "packages/p$i/package.json"
done
npm install --silent --offline >/dev/null 2>&1 || npm install --silent >/dev/null
printf 'node_modules\n.turbo\nout.txt\n' > .gitignore
git add -A && git commit -qm workspace
TURBO_TELEMETRY_DISABLED=1 "$turbo" run build --concurrency=8 >/dev/null 2>&1
fi
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
turbo_cmd="cd $ws && exec $turbo run build --concurrency=8 --output-logs=none"

cd "$root"
out=$root/bench/results
mkdir -p "$out"
both=(-n "loopc run ($n cached)" "sh -c 'cd $repo && exec $loopc run plan.loop'")
[[ -n $no_turbo ]] || both+=(-n "turbo run build ($n cached)" "sh -c '$turbo_cmd'")
# The first warm-up run replays task by task and records the run entry;
# the others take it.
hyperfine --warmup 2 --runs "$runs" -N --export-markdown "$out/cached.md.tmp" "${both[@]}"
{
  cat "$out/cached.md.tmp"
  echo
  for what in loopc turbo; do
    [[ $what == turbo && -n $no_turbo ]] && continue
    if [[ $what == loopc ]]; then cmd="cd $repo && exec $loopc run plan.loop"
    else cmd=$turbo_cmd; fi
    /usr/bin/time -f '%U %S %M' -o "$work/t" sh -c "$cmd" >/dev/null 2>&1
    read -r u s m < "$work/t"
    awk -v w="$what" -v u="$u" -v s="$s" -v m="$m" \
      'BEGIN { printf "- %s: CPU %.3f s (user %.2f, system %.2f), peak RSS %.0f MB\n", w, u + s, u, s, m / 1024 }'
  done
} > "$out/cached.md"
rm -f "$out/cached.md.tmp"
cat "$out/cached.md"
