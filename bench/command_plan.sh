# Sourced by bench/cached.sh and bench/fresh.sh: `command_plan DIR NAME N P`
# makes DIR a repository with one commit and a plan.loop (not committed,
# excluded) of N independent command tasks `tI` (`echo I > fI`), the loop
# NAME at `parallel = P`; the current directory is DIR afterwards.
command_plan() {
  mkdir -p "$1" && cd "$1"
  git init -q -b main && git config user.email b@loopc.invalid && git config user.name bench
  echo seed > seed && git add seed && git commit -qm seed
  {
    echo "loop \"$2\" { parallel = $4 }"
    for i in $(seq 0 $(($3 - 1))); do echo "task t$i { run = \"echo $i > f$i\" }"; done
  } > plan.loop
  echo /plan.loop >> .git/info/exclude
}
