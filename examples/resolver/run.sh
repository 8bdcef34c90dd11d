#!/usr/bin/env bash
# The resolver example, end to end, in one command:
#   builds loopc, creates a scratch git repository in a temporary directory
#   (never inside the loopc repository), copies the project and plan in,
#   runs `loopc run resolver.loop` (two tasks that conflict, and a scripted
#   resolver), prints the result, and removes the temporary directory again.
#
#   examples/resolver/run.sh            # leaves nothing behind
#   examples/resolver/run.sh --keep     # keeps the scratch repo and prints its path
#   LOOPC=/path/to/loopc examples/resolver/run.sh   # use an existing binary
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib.sh"
example_start resolver "$@"
command -v python3 >/dev/null || { echo "run.sh: python3 is needed for the scripted resolver" >&2; exit 2; }
repo="$scratch/features"
echo "==> scratch repository: $repo" >&2
mkdir -p "$repo"
cp -R "$here/project/." "$repo/"
cp "$here/resolver.loop" "$repo/resolver.loop"
cd "$repo"
git init -q -b main
git config user.name "loopc example"
git config user.email "example@loopc.invalid"
git add -A
git commit -q -m "features: initial list"

echo "==> loopc run resolver.loop" >&2
export EXAMPLE="$here"
status=0
"$LOOPC" run resolver.loop || status=$?

echo
echo "==> integration branch loop/resolver-demo"
git log --oneline --graph loop/resolver-demo
echo
echo "==> features.txt on loop/resolver-demo"
git show loop/resolver-demo:features.txt
echo
echo "==> what the resolver did"
for d in .loopc/logs/*/*/resolver; do
  [ -d "$d" ] || continue
  echo "$d:"
  sed 's/^/  /' "$d/agent.stdout"
  sed 's/^/  /' "$d/resolution.patch"
done
echo
if [ "$keep" = 1 ]; then
  echo "loopc exited with $status; the scratch repository is kept at $repo"
  echo "(inspect it with: cd $repo && $LOOPC status)"
else
  echo "loopc exited with $status; the scratch repository is removed (run.sh --keep keeps it)"
fi
exit "$status"
