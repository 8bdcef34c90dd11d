#!/usr/bin/env bash
# A fresh run of N independent command tasks (default 1000; bench/command_plan.sh) at `-j P`
# (default 8) next to the plain shell loop doing the same per task at the
# same parallelism: worktree add, the command, add and commit, merge onto
# an integration checkout (one merge at a time, under `flock`), worktree
# remove (`git worktree` calls one at a time too: concurrent ones fail,
# as loopc's do); P workers through `xargs -P`.
#
#   bench/fresh.sh [N] [P] [RUNS]
#
# Both are timed whole by GNU time (wall, CPU = user + system of every
# process, peak RSS), RUNS times each (default 3), alternating. Needs GNU
# time, git, flock, xargs. Writes bench/results/fresh.md. Not part of the
# test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${1:-1000}
p=${2:-8}
runs=${3:-3}
for tool in /usr/bin/time git flock xargs; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool" >&2; exit 2; }
done
loopc=${LOOPC:-$root/target/release/loopc}
[[ -x $loopc ]] || cargo build --release --quiet --bin loopc
work=$(mktemp -d "${TMPDIR:-/tmp}/loopc-fresh-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

base=$work/base
source "$root/bench/command_plan.sh"
command_plan "$base" fresh "$n" "$p"

cat > "$work/one.sh" <<'SH'
#!/bin/sh
# One task of the plain loop: $1 the task's number, run in the repository.
set -e
i=$1
# Concurrent `git worktree add`s fail on each other: one at a time (loopc too).
flock ../worktree.lock git worktree add -q -b "task-$i" "../wt-$i" plain
d=d$((i / 500))
(cd "../wt-$i" && mkdir -p "$d" && echo "$i" > "$d/f$i" && git add -A && git commit -qm "task $i")
flock ../merge.lock git -C ../integration merge -q --no-edit "task-$i"
flock ../worktree.lock git worktree remove --force "../wt-$i"
SH
cat > "$work/plain.sh" <<SH
#!/bin/sh
set -e
cd "$work/repo"
git branch -q -f plain main
git worktree add -q ../integration plain
seq 0 $((n - 1)) | xargs -P $p -n 1 sh $work/one.sh
SH

out=$root/bench/results
mkdir -p "$out"
row() { # what, time file
  read -r wall user sys rss < <(grep -v '^Command' "$2" | tail -n 1)
  awk -v w="$1" -v t="$wall" -v u="$user" -v s="$sys" -v m="$rss" -v n="$n" \
    'BEGIN { printf "| %s | %.1f s | %.1f s | %.0f ms | %.0f MB |\n", w, t, u + s, (u + s) * 1000 / n, m / 1024 }'
}
{
  echo "| what ($n tasks, parallel $p) | wall | CPU | CPU / task | peak RSS |"
  echo "|---|---:|---:|---:|---:|"
} > "$out/fresh.md.tmp"
for r in $(seq 1 "$runs"); do
  rm -rf "$work/repo" "$work/integration" && cp -a "$base" "$work/repo"
  (cd "$work/repo" && /usr/bin/time -f '%e %U %S %M' -o "$work/t" \
    "$loopc" --color never run --no-cache plan.loop > "$work/log" 2>&1) || tail -n 5 "$work/log" >&2
  landed=$(git -C "$work/repo" ls-tree -r --name-only loop/fresh | grep -c '/f[0-9]' || true)
  row "loopc run --no-cache (run $r, $landed landed)" "$work/t" | tee -a "$out/fresh.md.tmp"
  rm -rf "$work/repo" "$work/integration" "$work"/wt-* && cp -a "$base" "$work/repo"
  /usr/bin/time -f '%e %U %S %M' -o "$work/t" sh "$work/plain.sh" > "$work/log" 2>&1 || tail -n 5 "$work/log" >&2
  landed=$(git -C "$work/repo" ls-tree -r --name-only plain | grep -c '/f[0-9]' || true)
  row "plain shell loop (run $r, $landed landed)" "$work/t" | tee -a "$out/fresh.md.tmp"
done
mv "$out/fresh.md.tmp" "$out/fresh.md"
