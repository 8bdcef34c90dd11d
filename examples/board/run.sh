#!/usr/bin/env bash
# `loopc board` beside a live run, in one command:
#   builds loopc, creates a scratch git repository in a temporary directory
#   (never inside the loopc repository) with board.loop and steps.sh, starts
#   `loopc run board.loop` in the background (its output goes to run.log),
#   and opens `loopc board` in this terminal: cards move from pending to
#   running to passed every few seconds, `flaky` fails once and passes.
#   Press q to quit the board (the run is not stopped by it); the script
#   then waits for the run, prints `loopc status` and removes the directory.
#
#   examples/board/run.sh            # leaves nothing behind
#   examples/board/run.sh --keep     # keeps the scratch repo and prints its path
#   LOOPC=/path/to/loopc examples/board/run.sh   # use an existing binary
#   BOARD_STEP_SECONDS=1 examples/board/run.sh   # a quicker run
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
example_start board "$@"
run_pid=""
# The board never stops the run; leaving early (Ctrl-C) stops it here.
example_cleanup() {
  if [ -n "$run_pid" ] && kill -0 "$run_pid" 2>/dev/null; then
    kill -INT "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
}
repo="$scratch/shop"
echo "==> scratch repository: $repo" >&2
mkdir -p "$repo"
cp "$here/board.loop" "$here/steps.sh" "$repo/"
cd "$repo"
git init -q -b main
git config user.name "loopc example"
git config user.email "example@loopc.invalid"
printf '.loopc/\nrun.log\n' > .gitignore
git add -A
git commit -q -m "shop: the plan"

echo "==> loopc run board.loop, in the background (output in run.log)" >&2
"$LOOPC" run board.loop > run.log 2>&1 &
run_pid=$!
# The board shows the run once its state file is there.
for _ in $(seq 1 100); do
  [ -e .loopc/state.json ] && break
  sleep 0.1
done

if [ -t 0 ] && [ -t 1 ]; then
  echo "==> loopc board (q quits the board; the run goes on)" >&2
  "$LOOPC" board || true
else
  echo "==> not a terminal: run \`loopc board\` in $repo to watch; waiting for the run" >&2
fi

status=0
wait "$run_pid" || status=$?
run_pid=""
echo "==> the run ended with exit status $status; loopc status:"
"$LOOPC" status || { echo "==> run.log:"; cat run.log; }
if [ "$keep" = 1 ]; then
  echo "the scratch repository is kept at $repo"
else
  echo "the scratch repository is removed (run.sh --keep keeps it)"
fi
exit "$status"
