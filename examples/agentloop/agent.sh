#!/bin/sh
# The scripted agents of the agentloop example (no AI needed). They follow
# loopc's agent protocol: the prompt on stdin, LOOP_* in the environment,
# a handoff written to $LOOP_HANDOFF (the answerer prints its answer).
#
#   agent.sh planner   writes plan/backlog.loop from goal.md. When its
#                      feedback says it is re-planning, it drops what the
#                      customer rejected (the captcha) from the backlog.
#   agent.sh builder   builds one page: site/<name>.html. The sign-up page
#                      first asks how people sign up (needs_human), then
#                      builds what the answer says.
#   agent.sh customer  the customer's gate: rejects a page with a captcha.
#   agent.sh pm        the answerer: decides the sign-up question.
set -eu
mode="$1"
prompt="$(cat)"

handoff() { printf '{"status":"%s","summary":"%s"}' "$1" "$2" > "$LOOP_HANDOFF"; }

case "$mode" in
planner)
  mkdir -p plan
  out=plan/backlog.loop
  replanning=""
  if grep -q '^## Re-planning' "$LOOP_FEEDBACK_FILE" 2>/dev/null; then
    replanning=1
  fi
  printf '# Written by the planner from goal.md (attempt %s).\n' "$LOOP_ATTEMPT" > "$out"
  grep '^- ' goal.md | while IFS= read -r line; do
    item="${line#- }"
    name="${item%%:*}"
    what="${item#*: }"
    after=""
    case "$what" in
      *"(after "*")"*)
        after="${what##*(after }"
        after=": ${after%%)*}"
        what="${what%% (after *}"
        ;;
    esac
    # The customer rejected the captcha: the re-planned backlog drops it.
    if [ -n "$replanning" ]; then what="$(echo "$what" | sed 's/, with a captcha//')"; fi
    printf '\ntask %s "%s"%s {\n  prompt = "Build %s as site/%s.html."\n  gates  = [customer]\n}\n' \
      "$name" "$what" "$after" "$what" "$name" >> "$out"
  done
  if [ -n "$replanning" ]; then
    handoff completed "re-planned the backlog without the captcha"
  else
    handoff completed "wrote the backlog from goal.md"
  fi
  ;;
builder)
  name="${LOOP_TASK##*.}"
  mkdir -p site
  if [ "$name" = signup ] && ! printf '%s\n' "$prompt" | grep -q '^## Answer from'; then
    printf '<form>draft</form>\n' > "site/$name.html"
    printf '{"status":"needs_human","summary":"need a decision","question":"Do people sign up with an email address or a phone number?"}' > "$LOOP_HANDOFF"
    exit 0
  fi
  {
    printf '<h1>%s</h1>\n' "$LOOP_TITLE"
    if printf '%s\n' "$prompt" | grep -q 'The answer:'; then
      printf '<input name="%s">\n' "$(printf '%s\n' "$prompt" | sed -n '/^The answer:/{n;p;}' | tail -n 1 | tr -dc 'a-z ')"
    fi
    if printf '%s\n' "$prompt" | head -n 3 | grep -q 'captcha'; then
      printf '<div class="captcha"></div>\n'
    fi
  } > "site/$name.html"
  handoff completed "built site/$name.html"
  ;;
customer)
  if grep -q captcha site/*.html; then
    handoff failed "I asked for a sign-up form, not a puzzle: no captcha, please"
  else
    handoff completed "this is what I asked for"
  fi
  ;;
pm)
  echo "email"
  ;;
*)
  echo "agent.sh: unknown mode $mode" >&2
  exit 2
  ;;
esac
