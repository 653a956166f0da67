#!/usr/bin/env bash
# scripts/lib/deps.sh, shared by scripts/demo.sh and scripts/test.sh, with apt-get, dpkg-query,
# id and cmake replaced by stubs that log their arguments: a fresh machine's long steps say
# what they do on stderr (packages named, "a few minutes", cmake's progress passed through),
# the demo builds only the five tools, and test.sh still builds everything.
set -uo pipefail
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
check() {
  local name=$1
  shift
  if "$@" >/dev/null; then
    passes=$((passes + 1))
  else
    failures=$((failures + 1))
    echo "FAIL $name"
  fi
}

mkdir -p "$work/bin"
for stub in apt-get cmake; do
  cat >"$work/bin/$stub" <<STUB
#!/usr/bin/env bash
echo "$stub \$*" >>"$work/calls"
[[ $stub == cmake && \$* == --build* ]] && echo "[ 50%] Building CXX object stub.o"
exit 0
STUB
done
# Nothing is installed; the user is root.
printf '#!/usr/bin/env bash\nexit 1\n' >"$work/bin/dpkg-query"
printf '#!/usr/bin/env bash\necho 0\n' >"$work/bin/id"
chmod +x "$work/bin"/*

run() { # run NAME BASH-CODE: sources deps.sh with the stubs first in PATH
  : >"$work/calls"
  PATH="$work/bin:$PATH" CDC_ROOT="$source_dir" bash -c "source '$source_dir/scripts/lib/deps.sh'; $2" \
    >"$work/$1.out" 2>"$work/$1.err"
}

run install cdc_install_packages
check "install: says it installs and that it takes a few minutes" grep -q "installing .* a few minutes" "$work/install.err"
check "install: names the packages" grep -q "mariadb-server" "$work/install.err"
check "install: libpq-dev (cdc-apply --postgres) among them" grep -q "libpq-dev" "$work/install.err"
check "test.sh: the test packages bring PostgreSQL's server (apply_postgres.sh)" \
  bash -c "source '$source_dir/scripts/lib/deps.sh'; [[ \" \${CDC_TEST_PACKAGES[*]} \" == *' postgresql '* ]]"
check "install: runs apt-get update, then install" grep -q "^apt-get install .*mariadb-server" "$work/calls"
check "install: apt-get is not silenced (-qq)" test "$(grep -c -- '-qq' "$work/calls")" = 0
check "install: stdout stays empty (the demo's stdout is NDJSON)" test ! -s "$work/install.out"

run tools 'cdc_build_tools /tmp/build'
check "demo build: only the five tools" grep -qx "cmake --build /tmp/build -j [0-9]* --target cdc-plan cdc-snapshot cdc-merge cdc-stream cdc-sync" "$work/calls"
check "demo build: says what it builds" grep -q "building cdc-plan cdc-snapshot cdc-merge cdc-stream" "$work/tools.err"
check "demo build: cmake's progress reaches stderr" grep -q "^\[ 50%\] Building" "$work/tools.err"
check "demo build: stdout stays empty" test ! -s "$work/tools.out"
check "scripts/demo.sh builds with cdc_build_tools" grep -q "^cdc_build_tools " "$source_dir/scripts/demo.sh"

run all 'cdc_build /tmp/build -DCDC_SANITIZE=ON'
check "test.sh build: everything (no --target)" grep -qx "cmake --build /tmp/build -j [0-9]*" "$work/calls"
check "test.sh build: its CMake arguments are passed" grep -q "^cmake -S .* -B /tmp/build .*-DCDC_SANITIZE=ON" "$work/calls"
check "test.sh build: cmake's progress reaches stderr" grep -q "^\[ 50%\] Building" "$work/all.err"

echo "$passes passed, $failures failed"
((failures == 0))
