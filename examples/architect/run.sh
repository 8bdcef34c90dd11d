#!/usr/bin/env bash
# Plans that grow, end to end, in one command:
#   builds loopc, creates a scratch git repository in a temporary directory
#   (never inside the loopc repository) with goal.md and architect.loop,
#   runs `loopc run architect.loop` with the scripted agents of agent.sh,
#   shows how the architect's first plan fragment was rejected and what the
#   grown plan ran, runs it again (everything replays from the cache), and
#   removes the temporary directory again.
#
#   examples/architect/run.sh            # leaves nothing behind
#   examples/architect/run.sh --keep     # keeps the scratch repo and prints its path
#   LOOPC=/path/to/loopc examples/architect/run.sh   # use an existing binary
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
example_start architect "$@"
repo="$scratch/wordcount"
echo "==> scratch repository: $repo" >&2
mkdir -p "$repo"
cp "$here/goal.md" "$here/architect.loop" "$repo/"
cd "$repo"
git init -q -b main
git config user.name "loopc example"
git config user.email "example@loopc.invalid"
git add -A
git commit -q -m "wordcount: the goal"
export ARCHITECT_AGENT="$here/agent.sh"

echo "==> loopc graph architect.loop (before the run: design's tasks are still to come)"
"$LOOPC" graph architect.loop
echo

echo "==> loopc run architect.loop" >&2
status=0
"$LOOPC" run architect.loop || status=$?

echo
echo "==> the feedback design's second attempt was given"
cat .loopc/logs/design/2/feedback.md
echo
echo "==> loopc graph --state architect.loop (after the run)"
"$LOOPC" graph --state architect.loop
echo
echo "==> RELEASE.txt on loop/architect"
git show loop/architect:RELEASE.txt
echo
echo "==> loopc run architect.loop again: everything replays from the cache" >&2
"$LOOPC" run -q architect.loop || status=$?
"$LOOPC" status
echo
if [ "$keep" = 1 ]; then
  echo "loopc exited with $status; the scratch repository is kept at $repo"
else
  echo "loopc exited with $status; the scratch repository is removed (run.sh --keep keeps it)"
fi
exit "$status"
