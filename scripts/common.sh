# Shared by the scripts in this folder; sourced, never run. Defines:
#   SOFTWIRE_ROOT    the repository root (the scripts work from any current directory)
#   SOFTWIRE_PYTHON  Debian's python3 (with numpy, sklearn, torch from apt), not a pyenv one
#   say / die        messages prefixed with the calling script's name
#   build_dir_for    the build folder of a sanitizer/debug choice

SOFTWIRE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SOFTWIRE_PYTHON="${SOFTWIRE_PYTHON:-/usr/bin/python3}"
SOFTWIRE_SCRIPT="$(basename "$0")"

say() { printf '%s: %s\n' "$SOFTWIRE_SCRIPT" "$*"; }
die() { printf '%s: error: %s\n' "$SOFTWIRE_SCRIPT" "$*" >&2; exit 1; }

# build_dir_for SANITIZE DEBUG: build/, build-asan/, build-tsan/, each with -debug for --debug.
# SOFTWIRE_BUILD_DIR overrides the choice (relative paths are taken from the repository root).
build_dir_for() {
  local sanitize="$1" debug="$2" dir
  if [[ -n "${SOFTWIRE_BUILD_DIR:-}" ]]; then
    dir="$SOFTWIRE_BUILD_DIR"
    [[ "$dir" = /* ]] || dir="$SOFTWIRE_ROOT/$dir"
    printf '%s\n' "$dir"
    return
  fi
  dir="$SOFTWIRE_ROOT/build"
  case "$sanitize" in
    "") ;;
    address) dir+="-asan" ;;
    thread) dir+="-tsan" ;;
    *) die "--sanitize takes 'address' or 'thread', not '$sanitize'" ;;
  esac
  [[ "$debug" == 1 ]] && dir+="-debug"
  printf '%s\n' "$dir"
}

# Parallel jobs: SOFTWIRE_JOBS, else every core.
softwire_jobs() { printf '%s\n' "${SOFTWIRE_JOBS:-$(nproc)}"; }
