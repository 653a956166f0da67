#!/usr/bin/env bash
# Golden CLI tests: each tests/cli/cases/<case>/ holds
#   tool            the binary to run (cdc-plan, ...)
#   args            its arguments, one per line
#   stdin           (optional) what the tool reads on stdin; /dev/null otherwise
#   expected.exit   the exit status
#   expected.stderr (optional) a substring stderr must contain
#   expected.stdout (optional) what stdout must be, exactly
# Cases run without a controlling terminal (setsid), so a password prompt cannot block.
set -euo pipefail
tools_dir=$1
source_dir=$2
cases_dir="$source_dir/tests/cli/cases"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

failures=0
count=0
for case_dir in "$cases_dir"/*/; do
  name=$(basename "$case_dir")
  count=$((count + 1))
  tool=$(<"$case_dir/tool")
  args=()
  if [[ -s $case_dir/args ]]; then
    mapfile -t args <"$case_dir/args"
  fi
  status=0
  input=/dev/null
  [[ -f $case_dir/stdin ]] && input=$case_dir/stdin
  setsid -w "$tools_dir/$tool" "${args[@]}" <"$input" >"$work/stdout" 2>"$work/stderr" || status=$?
  expected_exit=$(<"$case_dir/expected.exit")
  problems=()
  [[ $status == "$expected_exit" ]] || problems+=("exit $status, expected $expected_exit")
  if [[ -f $case_dir/expected.stderr ]]; then
    want=$(<"$case_dir/expected.stderr")
    grep -qF -- "$want" "$work/stderr" || problems+=("stderr lacks: $want")
  fi
  if [[ -f $case_dir/expected.stdout ]]; then
    cmp -s "$case_dir/expected.stdout" "$work/stdout" || problems+=("stdout differs from expected.stdout")
  fi
  if ((${#problems[@]})); then
    failures=$((failures + 1))
    echo "FAIL $name: ${problems[*]}"
    echo "  stdout: $(head -c 400 "$work/stdout")"
    echo "  stderr: $(head -c 400 "$work/stderr")"
  else
    echo "ok   $name"
  fi
done
echo "$((count - failures)) passed, $failures failed"
((failures == 0))
