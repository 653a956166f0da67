# Shared by the integration shell tests: argument handling, the skip rule, and assertions.
# Usage in a test: source "$(dirname "$0")/lib.sh" "$@"
tools_dir=$1
source_dir=$2
if [[ -z ${CDC_TEST_PORT:-} ]]; then
  echo "skipped: CDC_TEST_PORT is not set; run scripts/test.sh, which starts a throwaway MariaDB"
  exit 77
fi
work=$(mktemp -d)
# remove_work: removes $work at the end, unless CDC_KEEP_WORK asks to keep it (outputs and
# stderr of every tool, for a person to read): =1 always, =failed when the test failed (the
# EXIT trap sets exit_status first). Then it prints where it is.
remove_work() {
  if [[ ${CDC_KEEP_WORK:-} == 1 || (${CDC_KEEP_WORK:-} == failed && ${exit_status:-0} != 0) ]]; then
    echo "kept $work"
  else
    rm -rf "$work"
  fi
}
trap 'exit_status=$?; remove_work' EXIT
failures=0
passes=0

# expect NAME EXPECTED_EXIT COMMAND...: runs COMMAND with stdout and stderr in $work/out, $work/err.
expect() {
  local name=$1 want=$2
  shift 2
  local status=0
  "$@" </dev/null >"$work/out" 2>"$work/err" || status=$?
  if [[ $status == "$want" ]]; then
    passes=$((passes + 1))
    echo "ok   $name"
  else
    fail "$name: exit $status, expected $want"
    echo "  stderr: $(head -c 600 "$work/err")"
  fi
}

# assert NAME CONDITION...: evaluates a test command; records the result, and returns it, so
# that `assert ... || show-why` shows why.
assert() {
  local name=$1
  shift
  if "$@" >/dev/null; then
    passes=$((passes + 1))
    echo "ok   $name"
  else
    fail "$name"
    return 1
  fi
}

# fail MESSAGE: counts a failed check and prints it; finish prints every failed check again at
# the end, where CI's shortened log of a long test still shows it.
failed_checks=()
fail() {
  failures=$((failures + 1))
  failed_checks+=("$1")
  echo "FAIL $1"
}

finish() {
  local check
  for check in "${failed_checks[@]}"; do
    echo "failed: ${check:0:300}"
  done
  echo "$passes passed, $failures failed"
  ((failures == 0))
}
