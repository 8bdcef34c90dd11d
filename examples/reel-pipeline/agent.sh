#!/bin/sh
# A scripted stand-in for a coding agent, for the REEL pipeline example. It
# follows loopc's agent protocol as a real agent CLI would: the prompt
# arrives on stdin, the task comes from $LOOP_TASK, the work is left as file
# changes in the current directory (the task's worktree), and a handoff is
# written to $LOOP_HANDOFF.
cat > /dev/null
mkdir -p out
echo "done by $LOOP_TASK" > "out/$LOOP_TASK.txt"
printf '{"status":"completed","summary":"wrote out/%s.txt","cost_usd":0}' "$LOOP_TASK" > "$LOOP_HANDOFF"
