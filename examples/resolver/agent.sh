#!/bin/sh
# The scripted agent of the resolver example (no AI needed): adds the
# feature its task is about to features.txt, in sorted order. Tasks
# `search` and `export` run side by side from the same commit and both
# insert a line at the same place, so the second to merge conflicts.
set -eu
cat > /dev/null                      # the prompt (a real agent reads it)
case "$LOOP_TASK" in
  search) feature="full-text search" ;;
  export) feature="export to PDF" ;;
  *) echo "agent.sh: no feature for task $LOOP_TASK" >&2; exit 1 ;;
esac
{ grep '^#' features.txt; { grep -v '^#' features.txt; echo "$feature"; } | LC_ALL=C sort -u; } > "$TMPDIR/features"
cat "$TMPDIR/features" > features.txt
printf '{"status":"completed","summary":"added %s"}\n' "$feature" > "$LOOP_HANDOFF"
