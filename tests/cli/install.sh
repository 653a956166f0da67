#!/usr/bin/env bash
# cmake --install puts the five binaries, their man pages, cdc-ndjson(5), cdc-formats(7) and
# cdc-connection(7) where packagers expect them; the installed cdc-sync finds the tools beside it.
set -euo pipefail
tools_dir=$1
build_dir=$(dirname "$tools_dir")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
missing=0
checks=0
for tool in cdc-plan cdc-snapshot cdc-merge cdc-stream cdc-sync cdc-apply; do
  checks=$((checks + 4))
  for file in "bin/$tool" "share/man/man1/$tool.1"; do
    if [[ ! -s $prefix/$file ]]; then
      echo "FAIL: $file was not installed"
      missing=$((missing + 1))
    fi
  done
  [[ -x $prefix/bin/$tool ]] || { echo "FAIL: bin/$tool is not executable"; missing=$((missing + 1)); }
  "$prefix/bin/$tool" --version >/dev/null || { echo "FAIL: installed $tool does not run"; missing=$((missing + 1)); }
done
# The page of the line format, in section 5.
checks=$((checks + 1))
if [[ ! -s $prefix/share/man/man5/cdc-ndjson.5 ]]; then
  echo "FAIL: share/man/man5/cdc-ndjson.5 was not installed"
  missing=$((missing + 1))
fi
# The pages of the output formats and of the connection options, in section 7.
for page in cdc-formats.7 cdc-connection.7; do
  checks=$((checks + 1))
  if [[ ! -s $prefix/share/man/man7/$page ]]; then
    echo "FAIL: share/man/man7/$page was not installed"
    missing=$((missing + 1))
  fi
done
# cdc-sync runs the tools of its own bin directory, not those of the build tree.
checks=$((checks + 1))
version=$(env -u CDC_TOOLS_DIR "$prefix/bin/cdc-sync" --version) || version=""
if ! grep -qxF "runs the tools in $prefix/bin:" <<<"$version"; then
  echo "FAIL: the installed cdc-sync does not run the tools installed beside it"
  missing=$((missing + 1))
fi
echo "$((checks - missing)) passed, $missing failed"
((missing == 0))
