# Sourced by bench/cached.sh and bench/fresh.sh: `command_plan DIR NAME N P`
# makes DIR a repository with one commit and a plan.loop (not committed,
# excluded) of N independent command tasks `tI`, each writing one file
# `dK/fI` (K = I / 500: no directory, so no tree, grows with N; a flat
# directory of 100,000 files would make every merge write a 100,000-entry
# tree), the loop NAME at `parallel = P`; the current directory is DIR
# afterwards. With TASKS=true each task runs `true` and writes nothing
# (`changes = optional`): the plan for 100,000 tasks, whose first run then
# merges no files.
command_plan() {
  mkdir -p "$1" && cd "$1"
  git init -q -b main && git config user.email b@loopc.invalid && git config user.name bench
  echo seed > seed && git add seed && git commit -qm seed
  {
    echo "loop \"$2\" { parallel = $4 }"
    for i in $(seq 0 $(($3 - 1))); do
      d=d$((i / 500))
      if [[ ${TASKS:-} == true ]]; then
        echo "task t$i { run = \"true\" changes = optional }"
      else
        echo "task t$i { run = \"mkdir -p $d && echo $i > $d/f$i\" }"
      fi
    done
  } > plan.loop
  echo /plan.loop >> .git/info/exclude
}
