#!/bin/sh
# The scripted agents of the architect example (no AI needed). It follows
# loopc's agent protocol: the prompt on stdin, LOOP_* in the environment,
# a handoff written to $LOOP_HANDOFF.
#
#   agent.sh architect   reads goal.md and writes the plan fragment
#                        plan/features.loop, one task per feature. Its first
#                        attempt misspells a dependency on purpose; loopc
#                        rejects the fragment and the next attempt reads the
#                        diagnostic in $LOOP_FEEDBACK_FILE and fixes it.
#   agent.sh build       does one feature task: writes features/<name>.txt.
set -eu
cat > /dev/null
mode="${1:-build}"

if [ "$mode" = architect ]; then
  mkdir -p plan
  out=plan/features.loop
  printf '# Written by the architect from goal.md (attempt %s).\n' "$LOOP_ATTEMPT" > "$out"
  grep '^- ' goal.md | while IFS= read -r line; do
    item="${line#- }"
    name="${item%%:*}"
    what="${item#*: }"
    after=""
    case "$what" in
      *"(after "*")"*)
        after="${what##*(after }"
        after="${after%%)*}"
        what="${what%% (after *}"
        # The deliberate mistake of the first attempt: a misspelled name.
        if [ "$LOOP_ATTEMPT" = 1 ]; then after="${after}r"; fi
        ;;
    esac
    if [ -n "$after" ]; then
      printf '\ntask %s "%s": %s {\n' "$name" "$what" "$after" >> "$out"
    else
      printf '\ntask %s "%s" {\n' "$name" "$what" >> "$out"
    fi
    printf '  prompt = "%s. Write features/%s.txt."\n}\n' "$what" "$name" >> "$out"
  done
  summary="wrote $out from goal.md"
  if [ -s "$LOOP_FEEDBACK_FILE" ]; then
    summary="$summary, fixed after: $(grep -m1 'error' "$LOOP_FEEDBACK_FILE" || true)"
  fi
else
  # A fragment task is named <producer>.<name>: its feature is <name>.
  name="${LOOP_TASK##*.}"
  mkdir -p features
  # What was there when this task started (its dependencies' work).
  seen="$(for f in features/*.txt; do [ -e "$f" ] && echo "saw $f"; done || true)"
  { echo "$LOOP_TITLE"; [ -z "$seen" ] || echo "$seen"; } > "features/$name.txt"
  summary="wrote features/$name.txt"
fi
printf '{"status":"completed","summary":"%s","cost_usd":0.01}' "$(echo "$summary" | tr -d '"\\')" > "$LOOP_HANDOFF"
