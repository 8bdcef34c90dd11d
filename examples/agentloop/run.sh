#!/usr/bin/env bash
# The agentloop shape, end to end, in one command:
#   builds loopc, creates a scratch git repository in a temporary directory
#   (never inside the loopc repository) with goal.md and plan.loop, runs
#   `loopc run plan.loop` with the scripted agents of agent.sh: the planner
#   writes the backlog, builders build it, the customer rejects the captcha
#   and the planner re-plans, the product manager agent answers the
#   builder's question; then it shows what happened and removes the
#   temporary directory again.
#
#   examples/agentloop/run.sh            # leaves nothing behind
#   examples/agentloop/run.sh --keep     # keeps the scratch repo and prints its path
#   LOOPC=/path/to/loopc examples/agentloop/run.sh   # use an existing binary
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
example_start agentloop "$@"
repo="$scratch/site"
echo "==> scratch repository: $repo" >&2
mkdir -p "$repo"
cp "$here/goal.md" "$here/plan.loop" "$repo/"
cd "$repo"
git init -q -b main
git config user.name "loopc example"
git config user.email "example@loopc.invalid"
git add -A
git commit -q -m "site: the goal"
export AGENTLOOP_AGENT="$here/agent.sh"

echo "==> loopc run plan.loop" >&2
status=0
"$LOOPC" run plan.loop || status=$?

echo
echo "==> the feedback the planner re-planned with"
cat .loopc/logs/plan/2/feedback.md
echo
echo "==> the answers recorded for plan.signup (by the pm agent)"
cat .loopc/answers/plan.signup.json
echo
echo "==> loopc graph --state plan.loop"
"$LOOPC" graph --state plan.loop
echo
echo "==> site/signup.html on loop/agentloop"
git show loop/agentloop:site/signup.html
echo
if [ "$keep" = 1 ]; then
  echo "loopc exited with $status; the scratch repository is kept at $repo"
else
  echo "loopc exited with $status; the scratch repository is removed (run.sh --keep keeps it)"
fi
exit "$status"
