#!/usr/bin/env bash
# Benchmarks loopc against ninja and make, and measures run overhead.
#
#   bench/run.sh [--quick]     # --quick: fewer runs, no 1M plans
#
# Needs: hyperfine, ninja-build, make, GNU time, python3, git
# (`apt-get install -y hyperfine ninja-build time`). Writes the tables to
# bench/results/ and prints them; docs/benchmarks.md explains them. Nothing
# here is part of the test suite (tests/check/scale.rs runs the deep shapes at
# 20,000 tasks on a 256 KiB stack; this script runs them at 1,000,000).
#
# Cold: every measured command starts without any cache of its own (no
# `.loopc/`, no `.ninja_log`, nothing built). With BENCH_DROP_CACHES=1 the
# page cache is dropped before each run too (root only; it slows everything
# else on the machine, so it is not the default).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
quick=${1:-}
runs=10
sizes=(1000 10000 100000 1000000)
if [[ $quick == --quick ]]; then runs=3; sizes=(1000 10000 100000); fi

for tool in hyperfine ninja make /usr/bin/time git python3; do
  command -v "$tool" >/dev/null || { echo "bench: missing $tool (apt-get install -y hyperfine ninja-build time)" >&2; exit 2; }
done

cargo build --release --quiet --bin loopc --example gen-plan
loopc=$root/target/release/loopc
gen=$root/target/release/examples/gen-plan
work=$(mktemp -d "${TMPDIR:-/tmp}/loopc-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$root/bench/results
mkdir -p "$out"
rm -f "$out/memory.txt"
# The generator's plans run `claude`, `pytest` and `ruff`: stand-ins on PATH,
# so that `run --dry-run` measures the dry run, not its missing-program stop.
mkdir -p "$work/bin"
for p in claude pytest ruff; do printf '#!/bin/sh\nexit 0\n' > "$work/bin/$p"; chmod +x "$work/bin/$p"; done
export PATH="$work/bin:$PATH"

echo "== machine"
{
  echo "- $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -sr)"
  echo "- $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "- $($loopc --version), $(ninja --version | sed 's/^/ninja /'), $(make --version | head -1), $(git --version)"
} | tee "$out/machine.md"

# Drops the page cache before each run when asked (BENCH_DROP_CACHES=1).
cold=true
if [[ ${BENCH_DROP_CACHES:-} == 1 ]]; then cold='sync; (echo 3 > /proc/sys/vm/drop_caches) 2>/dev/null || true'; fi

echo "== check vs ninja -n vs make -n -q (cold), peak memory, the curve to 1M"
for n in "${sizes[@]}"; do
  d=$work/g$n
  "$gen" "$n" "$d" >/dev/null
  (cd "$d" && git init -q -b main && git add plan.loop && git -c user.email=b@loopc.invalid -c user.name=bench commit -qm plan)
  # ninja and make have never built here: no .ninja_log, no targets.
  hyperfine --warmup 1 --runs "$runs" -N --ignore-failure --prepare "sh -c '$cold'" \
    --export-markdown "$out/check-$n.md" \
    -n "loopc check ($n)" "$loopc check $d/plan.loop" \
    -n "ninja -n ($n)" "ninja -C $d -n" \
    -n "make -n ($n)" "make -C $d -n all"
  hyperfine --runs "$(( n >= 1000000 ? 1 : runs ))" -N --ignore-failure --prepare "sh -c '$cold'" \
    --export-markdown "$out/curve-$n.md" \
    -n "check ($n)" "$loopc check $d/plan.loop" \
    -n "graph --format json ($n)" "$loopc graph --format json $d/plan.loop" \
    -n "run --dry-run ($n)" "sh -c 'cd $d && $loopc run --dry-run plan.loop'"
  for cmd in "$loopc check $d/plan.loop" "$loopc graph --format json $d/plan.loop" "ninja -C $d -n" "make -C $d -n all"; do
    /usr/bin/time -v -o "$work/rss" $cmd >/dev/null 2>&1 || true
    echo "peak memory ($n): ${cmd%% *} ${cmd#* }: $(awk -F': ' '/Maximum resident/{print $2}' "$work/rss") KiB" \
      | sed "s|$work/||; s|$root/target/release/||" | tee -a "$out/memory.txt"
  done
done

echo "== deep and wide shapes (chain, fan-in, fan-out)"
shapes=(1000000)
if [[ $quick == --quick ]]; then shapes=(100000); fi
rm -f "$out/shapes.txt"
for n in "${shapes[@]}"; do
  for shape in chain fanin fanout; do
    d=$work/$shape-$n
    mkdir -p "$d"
    python3 - "$shape" "$n" "$d/plan.loop" <<'PY'
import sys
shape, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
    def task(name, deps=""):
        f.write(f'task {name}{deps} {{ run = "true" }}\n')
    if shape == "chain":
        task("t0")
        for i in range(1, n):
            task(f"t{i}", f": t{i-1}")
    elif shape == "fanin":
        for i in range(n - 1):
            task(f"t{i}")
        task("sink", ": " + " ".join(f"t{i}" for i in range(n - 1)))
    else:
        task("root")
        for i in range(1, n):
            task(f"t{i}", ": root")
PY
    (cd "$d" && git init -q -b main && git add plan.loop && git -c user.email=b@loopc.invalid -c user.name=bench commit -qm plan)
    for cmd in "check" "graph --format json" "fmt --check" "run --dry-run"; do
      status=0
      /usr/bin/time -f '%e s, %M KiB' -o "$work/t" sh -c "cd $d && exec $loopc $cmd plan.loop" >/dev/null 2>&1 || status=$?
      echo "$shape $n: loopc $cmd: exit $status, $(tail -1 "$work/t")" | tee -a "$out/shapes.txt"
    done
    # The language server's document symbols of the same plan (its peak
    # memory through a wrapper that times the server alone).
    printf '#!/bin/sh\nexec /usr/bin/time -f "%%e s, %%M KiB" -o %s %s "$@"\n' "$work/lsp-t" "$loopc" > "$work/loopc-timed"
    chmod +x "$work/loopc-timed"
    status=0
    python3 bench/lsp_symbols.py "$work/loopc-timed" "$d/plan.loop" > "$work/lsp-out" 2>&1 || status=$?
    echo "$shape $n: loopc lsp document symbols: exit $status, $(tail -1 "$work/lsp-t") ($(tail -1 "$work/lsp-out"))" | tee -a "$out/shapes.txt"
  done
done

echo "== loopc lsp: a keystroke in the 10,000-task plan to its diagnostics"
python3 bench/lsp_keystroke.py "$loopc" "$work/g10000/plan.loop" 50 | tee "$out/lsp.txt"

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

echo "== run overhead: 40 independent command tasks vs a plain git loop"
base=$work/overhead-base
mkdir -p "$base" && cd "$base"
git init -q -b main && git config user.email b@loopc.invalid && git config user.name bench
echo seed > seed && git add seed && git commit -qm seed
{
  echo 'loop "ovh" { parallel = 1 }'
  for i in $(seq 0 39); do echo "task t$i { run = \"echo $i > out$i.txt\" }"; done
} > plan.loop
git add plan.loop && git commit -qm plan
cat > "$work/plain-loop.sh" <<'SH'
#!/usr/bin/env bash
# What loopc does per task, by hand: worktree add, the command, add and
# commit, merge onto an integration checkout, worktree remove.
set -eu
git branch -q -f plain main
git worktree add -q ../integration plain
for i in $(seq 0 39); do
  git worktree add -q -b "task-$i" "../wt-$i" plain
  (cd "../wt-$i" && echo "$i" > "out$i.txt" && git add -A && git commit -qm "task $i")
  git -C ../integration merge -q --no-edit "task-$i"
  git worktree remove --force "../wt-$i"
done
SH
chmod +x "$work/plain-loop.sh"
cd "$root"
hyperfine --runs "$runs" --export-markdown "$out/overhead.md" \
  --prepare "rm -rf $work/ovh && cp -a $base $work/ovh" \
  -n "loopc run --no-cache (40 tasks)" "cd $work/ovh && $loopc run --no-cache plan.loop >/dev/null 2>&1" \
  --prepare "rm -rf $work/ovh $work/integration $work/wt-* && cp -a $base $work/ovh" \
  -n "plain git loop (40 tasks)" "cd $work/ovh && $work/plain-loop.sh"

echo "== results in $out"
cat "$out"/check-*.md "$out"/curve-*.md "$out/memory.txt" "$out/shapes.txt" "$out/lsp.txt" "$out/cached-run.md" "$out/overhead.md"
