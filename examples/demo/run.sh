#!/usr/bin/env bash
# The loopc demo, end to end, in one command:
#   builds loopc, creates a scratch git repository in a temporary directory
#   (never inside the loopc repository), copies the demo project and plan in,
#   runs `loopc run demo.loop` with the scripted agent, prints the result,
#   and removes the temporary directory again.
#
#   examples/demo/run.sh            # leaves nothing behind
#   examples/demo/run.sh --keep     # keeps the scratch repo and prints its path
#   LOOPC=/path/to/loopc examples/demo/run.sh   # use an existing binary
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
example_start demo "$@"
command -v python3 >/dev/null || { echo "run.sh: python3 is needed for the demo project" >&2; exit 2; }
repo="$scratch/textkit"
echo "==> scratch repository: $repo" >&2
mkdir -p "$repo"
cp -R "$here/project/." "$repo/"
cp "$here/demo.loop" "$repo/demo.loop"
cd "$repo"
git init -q -b main
git config user.name "loopc demo"
git config user.email "demo@loopc.invalid"
git add -A
git commit -q -m "textkit: initial project"

echo "==> loopc run demo.loop" >&2
export DEMO_AGENT="$here/agent.py"
status=0
"$LOOPC" run demo.loop >"$scratch/summary.txt" || status=$?
if [ "$keep" = 1 ]; then
  cat "$scratch/summary.txt"
else
  # The worktrees loopc keeps are in the scratch repository, which goes
  # at the end: say so rather than point at a path that will be gone.
  # Nor to a report command for a repository that will be gone.
  sed -e 's|^\(kept: .*\), in /.*; remove them with `loopc clean`$|\1, in the scratch repository, which this script removes at its end (run.sh --keep keeps it)|' \
    -e 's|^report: \(loopc report .*\)$|report: `\1` in the scratch repository (run.sh --keep keeps it)|' \
    "$scratch/summary.txt"
fi

echo
echo "==> integration branch loop/demo"
git log --oneline --graph loop/demo
echo
echo "==> the project's tests on loop/demo"
git worktree add -q --detach "$scratch/check" loop/demo
(cd "$scratch/check" && PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s tests -t . 2>&1 | tail -n 3)
(cd "$scratch/check" && printf 'python3 -m textkit title "the lord of the rings" -> ' && python3 -m textkit title "the lord of the rings")
git worktree remove --force "$scratch/check"
echo
if [ "$keep" = 1 ]; then
  echo "loopc exited with $status; the scratch repository is kept at $repo"
  echo "(inspect it with: cd $repo && $LOOPC status)"
else
  echo "loopc exited with $status; the scratch repository is removed (run.sh --keep keeps it)"
fi
exit "$status"
