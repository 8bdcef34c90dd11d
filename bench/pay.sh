#!/usr/bin/env bash
# Paying once: agent sessions started and dollars charged by a rerun, per
# scenario, for two loopc binaries (docs/benchmarks.md "Paying once").
#
#   bench/pay.sh BEFORE_LOOPC [AFTER_LOOPC]
#
# BEFORE_LOOPC: a loopc built from an earlier commit (docs/benchmarks.md
# says which and how); AFTER_LOOPC defaults to this checkout's debug build
# (`cargo build` first). Sessions and dollars do not depend on the build
# type. Each scenario gets a fresh repository: a first run (all of it
# passes, or a task fails, or it is interrupted), then the change, then
# the measured run. The scripted agents log one line per session with the
# cost they report (`cost_usd` in the handoff) to a ledger outside the
# repository; the table counts the measured run's lines and sums their
# costs. Needs git, sh, bash.
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: bench/pay.sh BEFORE_LOOPC [AFTER_LOOPC]}
after=${2:-$PWD/target/debug/loopc}
for b in "$before" "$after"; do
  [[ -x $b ]] || { echo "bench/pay.sh: no loopc at $b" >&2; exit 2; }
done
# The scenarios run in their own repositories: a relative path would not
# be found there.
before=$(realpath "$before") after=$(realpath "$after")
work=$(mktemp -d "${TMPDIR:-/tmp}/loopc-pay.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@loopc.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@loopc.invalid

# The worker: a session line with its cost; `design` writes one fragment
# task per line of goal.md; `bad` always fails; `slow` fails until it is
# told why (empty feedback), and while `hold` exists its later attempts
# wait there (for the Ctrl-C scenario); the others write <task>.txt.
worker='#!/bin/sh
cat > /dev/null
echo "session $LOOP_TASK 0.40" >> "$LEDGER"
fail() { printf "{\"status\":\"failed\",\"summary\":\"%s\",\"cost_usd\":0.40}" "$1" > "$LOOP_HANDOFF"; exit 0; }
case "$LOOP_TASK" in
  design)
    mkdir -p plan; : > plan/f.loop
    while read -r item; do
      printf "task %s { prompt = \"build %s\" }\n" "$item" "$item" >> plan/f.loop
    done < goal.md ;;
  bad) fail "the sign is wrong again" ;;
  slow)
    [ -s "$LOOP_FEEDBACK_FILE" ] || fail "forgot the sign"
    if [ -e "$HOLD" ]; then touch "$HOLD.started"; sleep 600; fi
    echo slow > slow.txt ;;
  *) echo "$LOOP_TASK" > "$LOOP_TASK.txt" ;;
esac
printf "{\"status\":\"completed\",\"summary\":\"did %s\",\"cost_usd\":0.40}" "$LOOP_TASK" > "$LOOP_HANDOFF"
'
reviewer='#!/bin/sh
cat > /dev/null
echo "review $LOOP_TASK 0.10" >> "$LEDGER"
printf "{\"status\":\"completed\",\"summary\":\"fine\",\"cost_usd\":0.10}" > "$LOOP_HANDOFF"
'

# plan DIR GATES EXTRA: the plan, its defaults' gates GATES, tasks EXTRA.
plan() {
  cat > "$1/plan.loop" <<EOF
loop "pay" { parallel = 1 }
budget { iterations = 100  cost = \$100  failures = 20 }
agent bot { run = "sh $1.bin/worker.sh"  cost = \$1  env = { LEDGER = "$1.ledger"  HOLD = "$1.hold" } }
agent reviewer { run = "sh $1.bin/reviewer.sh"  cost = \$1  env = { LEDGER = "$1.ledger" } }
gate lint = "test -n \"\$LOOP_TASK\""
gate review { agent = reviewer  prompt = "Review \$LOOP_DIFF_FILE" }
defaults { agent = bot  gates = [$2] }
task a { prompt = "write a" }
task b: a { prompt = "write b" }
$3
EOF
}

# repo NAME: a fresh repository with the scripts and goal.md.
repo() {
  local d=$work/$1
  mkdir -p "$d" "$d.bin"
  printf '%s' "$worker" > "$d.bin/worker.sh"
  printf '%s' "$reviewer" > "$d.bin/reviewer.sh"
  : > "$d.ledger"
  (cd "$d" && git init -q -b main && printf 'parser\nlexer\nprinter\n' > goal.md \
    && echo pay > README && git add goal.md README && git commit -qm start)
  echo "$d"
}

# measure LOOPC DIR: runs LOOPC in DIR; prints "sessions dollars" of it.
measure() {
  local from
  from=$(wc -l < "$2.ledger")
  (cd "$2" && "$1" run -q >/dev/null 2>&1) || true
  tail -n +"$((from + 1))" "$2.ledger" \
    | awk '{ n++; c += $3 } END { printf "%d $%.2f\n", n, c }'
}

DESIGN='task design { prompt = "plan the work in goal.md"  inputs = ["goal.md"]  expands = "plan/f.loop" }'
FAILING='task bad { prompt = "compute"  attempts = 3 }'
SLOW='task slow { prompt = "compute"  attempts = 3 }'

# scenario NAME LOOPC: sets up, changes, measures; prints "sessions dollars".
scenario() {
  local d loopc=$2
  d=$(repo "$1-$(basename "$loopc")")
  case $1 in
    gate-added)
      plan "$d" lint ""
      (cd "$d" && "$loopc" run -q >/dev/null 2>&1) || true
      plan "$d" "lint, review" "" ;;
    gate-removed)
      plan "$d" "lint, review" ""
      (cd "$d" && "$loopc" run -q >/dev/null 2>&1) || true
      plan "$d" lint "" ;;
    goal-line-added)
      plan "$d" "lint, review" "$DESIGN"
      (cd "$d" && "$loopc" run -q >/dev/null 2>&1) || true
      (cd "$d" && echo checker >> goal.md && git commit -qam "one more goal") ;;
    rerun-after-failure)
      plan "$d" "lint, review" "$FAILING"
      (cd "$d" && "$loopc" run -q >/dev/null 2>&1) || true ;;
    ctrl-c)
      plan "$d" "lint, review" "$SLOW"
      : > "$d.hold"
      (cd "$d" && exec "$loopc" run -q >/dev/null 2>&1) &
      local pid=$! i=0
      while [[ ! -e $d.hold.started && $i -lt 600 ]]; do sleep 0.1; i=$((i + 1)); done
      kill -INT "$pid"; wait "$pid" || true
      rm -f "$d.hold" ;;
  esac
  measure "$loopc" "$d"
}

printf '| scenario | before: sessions | before: dollars | after: sessions | after: dollars |\n'
printf '|---|---:|---:|---:|---:|\n'
for s in gate-added gate-removed goal-line-added rerun-after-failure ctrl-c; do
  read -r bs bd < <(scenario "$s" "$before")
  read -r as ad < <(scenario "$s" "$after")
  printf '| %s | %s | %s | %s | %s |\n' "$s" "$bs" "$bd" "$as" "$ad"
done
