# What every examples/*/run.sh does first; sourced, not run:
#
#   here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
#   . "$here/../lib.sh"
#   example_start NAME "$@"
#
# example_start takes the script's arguments (only --keep), finds loopc
# (LOOPC, made absolute so it works after a cd; else a debug build of this
# checkout) and makes $scratch, a temporary directory outside the loopc
# repository that is removed when the script exits (kept with --keep). A
# script that has more to undo defines example_cleanup; it runs first.
# Sets: keep, src, LOOPC, scratch.

example_cleanup() { :; }

example_exit() {
  example_cleanup
  if [ "$keep" = 0 ]; then
    rm -rf "$scratch"
  fi
}

example_start() {
  local name="$1"
  shift
  keep=0
  for arg in "$@"; do
    case "$arg" in
      --keep) keep=1 ;;
      *) echo "run.sh: unknown argument $arg (only --keep)" >&2; exit 2 ;;
    esac
  done
  src="$(cd "$here/../.." && pwd)"
  if [ -z "${LOOPC:-}" ]; then
    echo "==> building loopc (cargo build: a few minutes on a fresh clone, seconds once built;" >&2
    echo "    LOOPC=target/debug/loopc $0 uses a binary you already have)" >&2
    (cd "$src" && cargo build --quiet --bin loopc)
    local target="${CARGO_TARGET_DIR:-$src/target}"
    case "$target" in /*) ;; *) target="$src/$target" ;; esac
    LOOPC="$target/debug/loopc"
  fi
  if [ -d "$LOOPC" ] || ! command -v "$LOOPC" >/dev/null 2>&1; then
    echo "run.sh: LOOPC=$LOOPC is not a program loopc can be run as (unset LOOPC to build one)" >&2
    exit 2
  fi
  # A relative LOOPC (target/release/loopc) still works after a cd.
  case "$LOOPC" in
    /*) ;;
    */*) LOOPC="$(cd "$(dirname "$LOOPC")" && pwd)/$(basename "$LOOPC")" ;;
  esac
  scratch="$(mktemp -d "${TMPDIR:-/tmp}/loopc-$name.XXXXXX")"
  case "$scratch/" in
    "$src"/*) echo "run.sh: refusing to use $scratch inside the loopc repository" >&2; exit 2 ;;
  esac
  trap example_exit EXIT
}
