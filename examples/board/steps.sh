#!/bin/sh
# One step of examples/board's plan: prints what it does (the board shows
# the last line), takes a few seconds, writes <task>.txt. `flaky` fails its
# first attempt. BOARD_STEP_SECONDS sets the pause (default 3).
task="$1"
pause="${BOARD_STEP_SECONDS:-3}"
echo "$task: starting"
sleep "$pause"
if [ "$task" = flaky ] && [ "${LOOP_ATTEMPT:-1}" = 1 ]; then
  echo "$task: the first attempt fails on purpose"
  exit 1
fi
echo "$task: done"
echo "$task" > "$task.txt"
