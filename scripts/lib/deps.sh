# Installs the Debian packages cdc needs to build, test and run its demo; does nothing when
# they are all there already. Sourced by scripts/test.sh and scripts/demo.sh.

CDC_PACKAGES=(
  cmake g++ make pkg-config
  libcli11-dev default-libmysqlclient-dev libsimdjson-dev libzstd-dev zlib1g-dev libdeflate-dev libfmt-dev doctest-dev
  mariadb-server mariadb-client
  mandoc jq procps
)

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
  echo "cdc: installing ${missing[*]}" >&2
  # If the package starts the system service, it stays untouched: cdc's scripts run their own.
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Configures and builds into $1 with the extra CMake arguments that follow.
cdc_build() {
  local build_dir=$1
  shift
  cmake -S "$CDC_ROOT" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$build_dir" -j "$(nproc)"
}
