#!/usr/bin/env bash
# Benchmarks loopc against ninja and make, and measures run overhead.
#
#   bench/run.sh [--quick]     # --quick: fewer runs, 1k/10k tasks only
#
# Needs: hyperfine, ninja-build, make, GNU time (`apt-get install -y hyperfine
# ninja-build time`), git. Writes the tables to bench/results/ and prints them;
# docs/benchmarks.md explains them. Nothing here is part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=${1:-}
runs=10
sizes=(1000 10000 100000)
if [[ $quick == --quick ]]; then runs=3; sizes=(1000 10000); fi

for tool in hyperfine ninja make /usr/bin/time git; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool (apt-get install -y hyperfine ninja-build time)" >&2; exit 2; }
done

cargo build --release --quiet --bin loopc --example gen-plan
loopc=$root/target/release/loopc
gen=$root/target/release/examples/gen-plan
work=$(mktemp -d "${TMPDIR:-/tmp}/loopc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$root/bench/results
mkdir -p "$out"

echo "== machine"
{
  echo "- $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)"
  echo "- $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "- $($loopc --version), $(ninja --version | sed 's/^/ninja /'), $(make --version | head -1), $(git --version)"
} | tee "$out/machine.md"

echo "== check vs ninja -n vs make -n -q"
for n in "${sizes[@]}"; do
  d=$work/g$n
  "$gen" "$n" "$d" >/dev/null
  (cd "$d" && ninja -j 4 >/dev/null)          # a first build, so ninja has nothing to do
  (cd "$d" && make -s -q all) || true         # make's first look (it also has nothing to do)
  hyperfine --warmup 1 --runs "$runs" -N --ignore-failure \
    --export-markdown "$out/check-$n.md" \
    -n "loopc check ($n)" "$loopc check $d/plan.loop" \
    -n "ninja -n ($n)" "ninja -C $d -n" \
    -n "make -n -q ($n)" "make -C $d -n -q all"
  for cmd in "$loopc check $d/plan.loop" "ninja -C $d -n" "make -C $d -n -q all"; do
    kb=$( { /usr/bin/time -f '%M' $cmd >/dev/null 2>/dev/null; } 2>&1 | tail -1 || true)
    echo "peak memory: $cmd: ${kb} KiB" | tee -a "$out/memory.txt"
  done
done

echo "== no-op run of a fully cached 1,000-task plan"
repo=$work/cached
mkdir -p "$repo" && cd "$repo"
git init -q -b main && git config user.email b@loopc.invalid && git config user.name bench
echo seed > seed && git add seed && git commit -qm seed
{
  echo 'loop "cached" { parallel = 2 }'
  for i in $(seq 0 999); do echo "task t$i { run = \"echo $i > f$i\" }"; done
} > plan.loop
git add plan.loop && git commit -qm plan
"$loopc" run plan.loop >/dev/null 2>&1     # the first run pays for every task
hyperfine --warmup 1 --runs "$runs" -N --export-markdown "$out/cached-run.md" \
  -n "loopc run (1000 cached)" "$loopc run plan.loop"
cd "$root"

echo "== run overhead: 200 independent command tasks vs a plain git loop"
base=$work/overhead-base
mkdir -p "$base" && cd "$base"
git init -q -b main && git config user.email b@loopc.invalid && git config user.name bench
echo seed > seed && git add seed && git commit -qm seed
{
  echo 'loop "ovh" { parallel = 1 }'
  for i in $(seq 0 199); do echo "task t$i { run = \"echo $i > f$i\" }"; done
} > plan.loop
git add plan.loop && git commit -qm plan
cat > "$work/plain-loop.sh" <<'SH'
#!/usr/bin/env bash
# What loopc does per task, by hand: worktree, command, commit, merge.
set -eu
git branch -q -f plain main
git worktree add -q ../integration plain
for i in $(seq 0 199); do
  git worktree add -q -b "task-$i" "../wt-$i" plain
  (cd "../wt-$i" && echo "$i" > "f$i" && git add -A && git commit -qm "task $i")
  git -C ../integration merge -q --no-edit "task-$i"
  git worktree remove --force "../wt-$i"
done
SH
chmod +x "$work/plain-loop.sh"
cd "$root"
hyperfine --runs 3 --export-markdown "$out/overhead.md" \
  --prepare "rm -rf $work/ovh && cp -a $base $work/ovh" \
  -n "loopc run --no-cache (200 tasks)" "cd $work/ovh && $loopc run --no-cache plan.loop >/dev/null 2>&1" \
  --prepare "rm -rf $work/ovh $work/integration $work/wt-* && cp -a $base $work/ovh" \
  -n "plain git loop (200 tasks)" "cd $work/ovh && $work/plain-loop.sh"

echo "== results in $out"
cat "$out"/check-*.md "$out/cached-run.md" "$out/overhead.md"
