#!/usr/bin/env bash
# Runs the tests: installs what is missing, builds, starts a throwaway MariaDB (ROW binlog,
# FULL row image and metadata, strict GTIDs, server_id 1), runs them through CTest, and always
# stops the server it started.
#
#   scripts/test.sh              the unit, CLI, fixture and integration tests (ctest -LE fault):
#                                what a change needs checked, in minutes; RelWithDebInfo build in build/
#   scripts/test.sh --all        everything, the fault-injection proofs (label fault) too: what CI runs
#   scripts/test.sh --sanitize   clang, AddressSanitizer + UndefinedBehaviorSanitizer build in
#                                build-sanitize/ (shared with scripts/fuzz.sh's targets)
#   CDC_BUILD_DIR=DIR            build there instead (a second checkout or worktree beside this one)
#   extra arguments after -- go to ctest (e.g. -- -L unit, -- -R check, -- -L fault); they
#   choose the tests themselves: with them, neither the default's -LE fault nor --all applies
set -euo pipefail

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/scripts/lib/deps.sh"
CDC_PACKAGES+=("${CDC_TEST_PACKAGES[@]}")
source "$CDC_ROOT/scripts/lib/throwaway_mariadb.sh"

build_dir="${CDC_BUILD_DIR:-$CDC_ROOT/build}"
cmake_args=()
ctest_args=()
all=false
while (($#)); do
  case $1 in
    --all) all=true ;;
    --sanitize)
      build_dir="${CDC_BUILD_DIR:-$CDC_ROOT/build-sanitize}"
      CDC_PACKAGES+=("${CDC_SANITIZE_PACKAGES[@]}")
      cmake_args+=("${CDC_SANITIZE_CMAKE_ARGS[@]}")
      ;;
    --)
      shift
      ctest_args+=("$@")
      break
      ;;
    *)
      echo "scripts/test.sh: unknown argument '$1'; use --all, --sanitize, or -- followed by ctest arguments" >&2
      exit 2
      ;;
  esac
  shift
done

suite_started=$SECONDS
cdc_install_packages
cdc_build "$build_dir" "${cmake_args[@]}"

server_dir=$(mktemp -d "${TMPDIR:-/tmp}/cdc-test-server.XXXXXX")
trap 'throwaway_stop "$server_dir/server"; rm -rf "$server_dir"' EXIT INT TERM
throwaway_start "$server_dir/server"
echo "scripts/test.sh: throwaway MariaDB on 127.0.0.1:$THROWAWAY_PORT (started in ${THROWAWAY_STARTUP_SECONDS}s)"

export CDC_TEST_HOST=127.0.0.1
export CDC_TEST_PORT=$THROWAWAY_PORT
export CDC_TEST_SOCKET=$THROWAWAY_SOCKET
export CDC_TEST_DATADIR=$server_dir/server/data
export CDC_TEST_USER=cdc
export CDC_TEST_PASSWORD=$THROWAWAY_CDC_PASSWORD
# The sanitizer runtimes: fail on the first error, and keep the client library's
# process-lifetime allocations out of the leak report.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$CDC_ROOT/tests/lsan.supp:print_suppressions=0}

# The fault proofs take most of the suite's time: only with --all (or when -- asks for them).
if ((${#ctest_args[@]} == 0)) && ! $all; then
  ctest_args=(-LE fault)
  echo "scripts/test.sh: the unit, CLI, fixture and integration tests (scripts/test.sh --all adds the fault proofs)"
fi
status=0
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "${ctest_args[@]}" || status=$?
echo "scripts/test.sh: finished in $((SECONDS - suite_started))s"
exit "$status"
