#!/usr/bin/env bash
# The man pages must not drift from the tools (STYLE.md items 23 and 24). For each tool:
#   1. `mandoc -Tlint -W warning man/<tool>.1` prints nothing;
#   2. every long option that `<tool> --help` mentions appears in the rendered page, or in a
#      page of the options several tools share that it refers to with .Xr: cdc-connection(7)
#      (connection and TLS) and cdc-formats(7) (--format, --mask ...); no other page counts;
#   3. every command line in EXAMPLES that starts with the tool's name passes its option parser.
# For 3, the example's words (up to the first |, ;, && or redirection) run without a terminal,
# with the connection made impossible: -h/-P/--connect-timeout values are replaced, or added,
# as 127.0.0.1, port 1 and 1 second (and cdc-sync's --retry-for as 1 second); cdc-apply's
# --postgres CONNINFO is replaced by a socket directory that does not exist, and the MariaDB
# options are then not added (they exclude each other). Exit 0 (--help, --version), 1 (not in this version yet)
# 69 (server unavailable), 65 (input is not a binlog) or 74 (input missing) means the options
# parsed; 2 means the example is a usage error.
# A bare -p or --password is dropped (it would prompt). HOME is a scratch directory, and the
# files that FILE options name (--defaults-file ~/.cdc.cnf) are created there, empty.
# cdc-sync runs the tools of TOOLS_DIR (CDC_TOOLS_DIR).
# man/cdc-ndjson.5, the format of the lines, man/cdc-formats.7, the output formats, and
# man/cdc-connection.7, the connection options, have no tool: they get check 1 only
# (tests/cli/ndjson_documented.sh checks what cdc-ndjson.5 documents).
# Usage: man_pages.sh TOOLS_DIR SOURCE_DIR
set -euo pipefail
tools_dir=$1
source_dir=$2
export CDC_TOOLS_DIR=$tools_dir
if ! command -v mandoc >/dev/null; then
  echo "mandoc is not installed: skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
# Creates the file an example names (relative to the example's scratch working directory),
# unless it is an absolute path outside the scratch area.
make_file() {
  local path=$1
  [[ $path == /* ]] || path="$work/run/$path"
  [[ $path != "$work"/* ]] || { mkdir -p "$(dirname "$path")" && touch "$path"; }
}
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

# The pages of shared options whose text counts, for check 2, in a tool page that refers to them.
shared_pages=(cdc-connection.7 cdc-formats.7)
for page in cdc-ndjson.5 "${shared_pages[@]}"; do
  lint=$(mandoc -Tlint -W warning "$source_dir/man/$page" 2>&1) && [[ -z $lint ]] ||
    { fail "mandoc -Tlint -W warning man/$page is not clean:" && printf '    %s\n' "$lint"; }
done

for tool in cdc-plan cdc-snapshot cdc-merge cdc-stream cdc-sync cdc-apply; do
  page="$source_dir/man/$tool.1"
  bin="$tools_dir/$tool"
  [[ -x $bin ]] || { fail "$tool: $bin is not an executable" && continue; }
  lint=$(mandoc -Tlint -W warning "$page" 2>&1) && [[ -z $lint ]] ||
    { fail "$tool: mandoc -Tlint -W warning man/$tool.1 is not clean:" && printf '    %s\n' "$lint"; }

  help=$("$bin" --help)
  text=$(mandoc -Tascii -O width=1000 "$page" | col -b)
  # Check 2 reads the page and the shared pages it refers to; check 3, the page alone.
  documented=$text
  referred=()
  for shared in "${shared_pages[@]}"; do
    grep -qE -- "(^\.|[[:space:]])Xr ${shared%.*} ${shared##*.}([^0-9]|\$)" "$page" || continue
    referred+=("$shared")
    documented+=$'\n'$(mandoc -Tascii -O width=1000 "$source_dir/man/$shared" | col -b)
  done
  missing=()
  for opt in $(grep -oE -- '--[A-Za-z][A-Za-z0-9-]*' <<<"$help" | sort -u); do
    grep -qE -- "(^|[^A-Za-z0-9-])$opt([^A-Za-z0-9-]|\$)" <<<"$documented" || missing+=("$opt")
  done
  ((${#missing[@]} == 0)) ||
    fail "$tool: --help has options that man/$tool.1${referred[*]:+ and the pages it refers to (${referred[*]})} lack: ${missing[*]}"

  file_options=" $( (grep -oE -- '--[A-Za-z0-9-]+ TEXT:FILE' <<<"$help" || true) | cut -d' ' -f1 | tr '\n' ' ')"
  grep -q -- '--connect-timeout' <<<"$help" && connects=true || connects=false
  examples=$(awk '/^EXAMPLES$/ { on = 1; next } /^[^ \t]/ { on = 0 } on' <<<"$text" |
    sed -e 's/^[[:space:]]*//' -e 's/^\$ //' -e ':a' -e '/\\$/N; s/\\\n//; ta' | grep -E "^$tool( |\$)" || true)
  [[ -n $examples ]] || fail "$tool: no command line in the EXAMPLES of man/$tool.1 starts with $tool"
  while IFS= read -r line; do
    [[ -n $line ]] || continue
    rm -rf "${work:?}/home" "${work:?}/run" && mkdir -p "$work/home" "$work/run"
    if ! xargs printf '%s\0' <<<"$line" >"$work/words" 2>"$work/err"; then
      fail "$tool: cannot split this example into words: $line" && continue
    fi
    mapfile -d '' words <"$work/words"
    args=() pending="" host=false port=false timeout=false retry=false postgres=false
    for ((i = 1; i < ${#words[@]}; i++)); do
      word=${words[i]}
      case $word in
        '|' | '||' | '&&' | ';' | '&' | '#'* | [0-9]'>'* | '>'* | '<'*) break ;;
        -p | --password) continue ;;
        \~/*) word="$work/home/${word#\~/}" ;; # the example's ~ is the scratch HOME
      esac
      if [[ -n $pending ]]; then # the value of the option before
        if [[ $pending == file ]]; then make_file "$word"; else word=$pending; fi
        args+=("$word") && pending="" && continue
      fi
      if $connects; then
        case $word in
          -h | --host) pending=127.0.0.1 host=true ;;
          -P | --port) pending=1 port=true ;;
          --connect-timeout) pending=1 timeout=true ;;
          --host=*) word=--host=127.0.0.1 host=true ;;
          -h?*) word=-h127.0.0.1 host=true ;;
          --port=*) word=--port=1 port=true ;;
          -P?*) word=-P1 port=true ;;
          --connect-timeout=*) word=--connect-timeout=1 timeout=true ;;
          --retry-for) pending=1 retry=true ;;
          --postgres) pending="host=$work/none port=1 dbname=none" postgres=true ;;
          --postgres=*) word="--postgres=host=$work/none port=1 dbname=none" postgres=true ;;
          --retry-for=*) word=--retry-for=1 retry=true ;;
        esac
      fi
      if [[ $word == --*=* && $file_options == *" ${word%%=*} "* ]]; then
        make_file "${word#*=}"
      elif [[ $file_options == *" $word "* ]]; then
        pending="file"
      fi
      args+=("$word")
    done
    if $connects && ! $postgres; then
      $host || args+=(-h 127.0.0.1)
      $port || args+=(-P 1)
      $timeout || args+=(--connect-timeout 1)
      # cdc-sync runs a tool that exits 69 again for --retry-for seconds (60 by default):
      # one second is enough to see the options parse.
      [[ $tool == cdc-sync ]] && ! $retry && args+=(--retry-for 1)
    fi
    status=0
    (cd "$work/run" && HOME="$work/home" setsid -w timeout 60 "$bin" "${args[@]}") \
      </dev/null >"$work/out" 2>"$work/err" || status=$?
    case $status in 0 | 1 | 65 | 69 | 74) continue ;; esac
    fail "$tool: example exits $status (0, 1, 65, 69 or 74 expected): $line"
    echo "    ran: $tool ${args[*]}"
    sed 's/^/    /' "$work/err"
  done <<<"$examples"
done

((failures == 0)) || { echo "man_pages: $failures failure(s)" && exit 1; }
echo "man_pages: all man pages pass"
