#!/usr/bin/env bash
# REEL's pipeline with loopc, end to end, in one command:
#   builds loopc, creates a scratch git repository in a temporary directory
#   (never inside the loopc repository) holding the spec tree specs/
#   (todo/, inflight/, active/), runs `loopc run specs` with the scripted
#   agent: only the inflight/ specs run, and each spec whose tasks all pass
#   moves to review/ with one commit on the integration branch. A second
#   run replays everything from the cache and moves nothing twice. Then
#   the temporary directory is removed again.
#
#   examples/reel-pipeline/run.sh            # leaves nothing behind
#   examples/reel-pipeline/run.sh --keep     # keeps the scratch repo and prints its path
#   LOOPC=/path/to/loopc examples/reel-pipeline/run.sh   # use an existing binary
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
example_start reel "$@"
repo="$scratch/project"
echo "==> scratch repository: $repo" >&2
mkdir -p "$repo"
cp -R "$here/project/." "$repo/"
cp -R "$here/specs" "$repo/specs"
cd "$repo"
git init -q -b main
git config user.name "loopc example"
git config user.email "example@loopc.invalid"
git add -A
git commit -q -m "project and its spec tree"
export REEL_AGENT="$here/agent.sh"

echo "==> loopc run specs --dry-run" >&2
"$LOOPC" run specs --dry-run

echo "==> loopc run specs" >&2
status=0
"$LOOPC" run specs || status=$?

echo
echo "==> commits on the integration branch loop/specs"
git log --format='%h %s' main..loop/specs
echo
echo "==> the spec tree on loop/specs"
git ls-tree -r --name-only loop/specs -- specs
echo
echo "==> the spec tree in your checkout (unchanged until you merge loop/specs)"
find specs -type f | sort

if [ "$status" = 0 ]; then
  head="$(git rev-parse loop/specs)"
  echo
  echo "==> loopc run specs, again: every task replayed from the cache" >&2
  "$LOOPC" run specs || status=$?
  if [ "$(git rev-parse loop/specs)" = "$head" ]; then
    echo "the integration branch is rebuilt exactly as before: one move per spec, not two"
  else
    echo "run.sh: the rerun changed the integration branch" >&2
    status=1
  fi
fi
echo
if [ "$keep" = 1 ]; then
  echo "loopc exited with $status; the scratch repository is kept at $repo"
  echo "(inspect it with: cd $repo && $LOOPC status && $LOOPC board specs)"
else
  echo "loopc exited with $status; the scratch repository is removed (run.sh --keep keeps it)"
fi
exit "$status"
