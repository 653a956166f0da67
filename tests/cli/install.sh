#!/usr/bin/env bash
# cmake --install puts the four binaries and their man pages where packagers expect them.
set -euo pipefail
tools_dir=$1
build_dir=$(dirname "$tools_dir")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
missing=0
for tool in cdc-plan cdc-snapshot cdc-merge cdc-stream; do
  for file in "bin/$tool" "share/man/man1/$tool.1"; do
    if [[ ! -s $prefix/$file ]]; then
      echo "FAIL: $file was not installed"
      missing=$((missing + 1))
    fi
  done
  [[ -x $prefix/bin/$tool ]] || { echo "FAIL: bin/$tool is not executable"; missing=$((missing + 1)); }
  "$prefix/bin/$tool" --version >/dev/null || { echo "FAIL: installed $tool does not run"; missing=$((missing + 1)); }
done
echo "$((12 - missing)) passed, $missing failed"
((missing == 0))
