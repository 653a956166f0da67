# Installs the Debian packages cdc needs to build, test and run its demo; does nothing when
# they are all there already. Sourced by scripts/test.sh and scripts/demo.sh.

CDC_PACKAGES=(
  cmake g++ make pkg-config
  libcli11-dev default-libmysqlclient-dev libsimdjson-dev libzstd-dev zlib1g-dev libdeflate-dev libssl-dev libfmt-dev doctest-dev
  libpq-dev
  mariadb-server mariadb-client
  mandoc jq procps python3
)
# libpq-dev: cdc-apply --postgres (libpq, PostgreSQL's own client library; the binaries need its
# runtime, libpq5, which it brings).
# What only the tests use (scripts/test.sh and scripts/fault-proof.sh add them): Prometheus' and
# YAML's Python parsers, sshd with GNU parallel for the snapshot across hosts, and PostgreSQL's
# server for cdc-apply --postgres (tests/integration/apply_postgres.sh starts its own; the
# package's own cluster is left alone).
CDC_TEST_PACKAGES=(python3-prometheus-client python3-yaml openssh-server parallel postgresql)

cdc_install_packages() {
  local missing=()
  local package
  for package in "${CDC_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$package")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "cdc: missing Debian packages: ${missing[*]}; run as root, or: sudo apt-get install ${missing[*]}" >&2
    return 1
  fi
  # A fresh machine lacks most of them: say what is coming, and let apt-get show each step,
  # so that minutes of downloading and unpacking do not look like a hang.
  echo "cdc: installing ${#missing[@]} Debian package(s) with apt-get, which takes a few minutes on a fresh" \
    "machine: ${missing[*]}" >&2
  echo "cdc: apt-get update" >&2
  # If the package starts the system service, it stays untouched: cdc's scripts run their own.
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  echo "cdc: apt-get install ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  echo "cdc: the packages are installed" >&2
}

# The sanitizer build (scripts/test.sh --sanitize, scripts/fuzz.sh: one build directory for
# both): clang with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage, so
# the same objects serve the sanitized suite and the fuzz targets. clang compiles it in about
# half the time gcc takes with the sanitizers, which counts on a fresh CI machine.
CDC_SANITIZE_PACKAGES=(clang libclang-rt-14-dev)
CDC_SANITIZE_CMAKE_ARGS=(-DCMAKE_CXX_COMPILER=clang++ -DCDC_FUZZ=ON)

# The programs users run; cdc-sync runs the other four.
CDC_TOOL_TARGETS=(cdc-plan cdc-snapshot cdc-merge cdc-stream cdc-sync)

# Configures and builds everything (tools and tests) into $1, with the extra CMake arguments
# that follow. cmake's percentage lines go to stderr: a first build takes minutes.
cdc_build() {
  local build_dir=$1
  shift
  _cdc_configure "$build_dir" "$@"
  echo "cdc: building everything in $build_dir ($(nproc) parallel jobs; minutes the first time)" >&2
  cmake --build "$build_dir" -j "$(nproc)" >&2
}

# As cdc_build, but only the targets named after the build directory, before the CMake
# arguments: cdc_build_targets DIR TARGET... [-- CMAKE_ARG...].
cdc_build_targets() {
  local build_dir=$1
  shift
  local targets=()
  while (($#)) && [[ $1 != -- ]]; do
    targets+=("$1")
    shift
  done
  (($#)) && shift
  _cdc_configure "$build_dir" "$@"
  echo "cdc: building ${targets[*]} in $build_dir ($(nproc) parallel jobs; minutes the first time)" >&2
  cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" >&2
}

# As cdc_build, but only the tools (scripts/demo.sh): not the tests the demo does not run.
cdc_build_tools() {
  local build_dir=$1
  shift
  _cdc_configure "$build_dir" "$@"
  echo "cdc: building ${CDC_TOOL_TARGETS[*]} in $build_dir ($(nproc) parallel jobs; a few minutes the first" \
    "time)" >&2
  cmake --build "$build_dir" -j "$(nproc)" --target "${CDC_TOOL_TARGETS[@]}" >&2
}

_cdc_configure() {
  local build_dir=$1
  shift
  echo "cdc: configuring the build in $build_dir (cmake)" >&2
  cmake -S "$CDC_ROOT" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
}
