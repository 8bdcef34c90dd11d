#!/usr/bin/env bash
# loopc's own cost per attempt when the work runs elsewhere: N agent tasks
# (default 1000, independent) through an executor whose launcher sleeps 2 s
# and then runs a trivial agent, at each `parallel` given (default 8 64 256).
#
#   bench/executors.sh [N] [PARALLEL…]
#
# Prints one row per `parallel`: wall time, the ideal ceil(N / parallel) × 2 s
# and the ratio, loopc's own CPU per attempt (loopc and its git calls: the
# CPU of the whole run minus that of the launcher and agent, measured alone),
# and peak RSS of the largest process (GNU time's %M). Needs GNU time, git.
# Writes bench/results/executors.md. Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n=${1:-1000}
shift || true
pars=("$@")
[[ ${#pars[@]} -gt 0 ]] || pars=(8 64 256)
command -v /usr/bin/time >/dev/null || { echo "bench: missing GNU time (apt-get install -y time)" >&2; exit 2; }
loopc=${LOOPC:-$root/target/release/loopc}
[[ -x $loopc ]] || cargo build --release --quiet --bin loopc
work=$(mktemp -d "${TMPDIR:-/tmp}/loopc-exec-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat > "$work/launch.sh" <<'SH'
#!/bin/sh
# A remote launcher's latency: 2 s, then the command.
sleep 2
exec "$@"
SH
cat > "$work/agent.sh" <<'SH'
#!/bin/sh
cat > /dev/null
echo "made by $LOOP_TASK" > "$LOOP_TASK.txt"
printf '{"status":"completed","summary":"ok"}' > "$LOOP_HANDOFF"
SH

# The launcher and agent alone (the launcher without its sleep), started
# as loopc starts them, to subtract their CPU.
base_dir=$work/base
mkdir -p "$base_dir"
grep -v '^sleep' "$work/launch.sh" > "$work/launch0.sh"
cat > "$work/base.sh" <<SH
#!/bin/sh
cd "$base_dir"
i=0
while [ \$i -lt $n ]; do
  LOOP_TASK=t\$i LOOP_HANDOFF=h sh -c "sh $work/launch0.sh sh -c 'sh $work/agent.sh'" < /dev/null
  i=\$((i + 1))
done
SH
/usr/bin/time -f '%U %S' -o "$work/base.time" sh "$work/base.sh"
read -r bu bs < "$work/base.time"

out=$root/bench/results/executors.md
{
  echo "| parallel | wall | ideal | ratio | loopc CPU / attempt | peak RSS | landed |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
} > "$out.tmp"
for p in "${pars[@]}"; do
  repo=$work/repo-$p
  git init -q -b main "$repo"
  git -C "$repo" -c user.email=b@example.com -c user.name=bench commit -q --allow-empty -m init
  {
    echo "loop \"bench\" { parallel = $p }"
    echo "budget { iterations = $((n * 2)) }"
    echo "executor remote { run = \"sh $work/launch.sh\" }"
    echo "agent bot { run = \"sh $work/agent.sh\"  executor = remote }"
    echo "defaults { agent = bot  attempts = 1 }"
    for i in $(seq -w 1 "$n"); do echo "task t$i { prompt = \"x\" }"; done
  } > "$repo/plan.loop"
  echo "/plan.loop" >> "$repo/.git/info/exclude"
  # A failed task is reported (the row says how many landed), not fatal.
  (cd "$repo" && /usr/bin/time -f '%e %U %S %M' -o "$work/time-$p" \
    "$loopc" --color never run plan.loop > "$work/log-$p" 2>&1) || {
    echo "bench: the run at parallel $p did not pass every task:" >&2
    grep -A3 '^run ' "$work/log-$p" >&2 || tail -n 5 "$work/log-$p" >&2
  }
  read -r wall user sys rss < <(grep -v '^Command' "$work/time-$p" | tail -n 1)
  passed=$(git -C "$repo" ls-tree --name-only loop/bench | grep -c '^t' || true)
  ideal=$(( (n + p - 1) / p * 2 ))
  awk -v p="$p" -v w="$wall" -v i="$ideal" -v u="$user" -v s="$sys" -v bu="$bu" -v bs="$bs" -v n="$n" -v m="$rss" -v k="$passed" \
    'BEGIN { printf "| %d | %.1f s | %d s | %.2f× | %.0f ms | %.0f MB | %d |\n", p, w, i, w / i, (u + s - bu - bs) * 1000 / n, m / 1024, k }' \
    | tee -a "$out.tmp"
  rm -rf "$repo"
done
mv "$out.tmp" "$out"
echo "(the launcher and agent alone: $bu s user, $bs s system for $n runs; subtracted)"
