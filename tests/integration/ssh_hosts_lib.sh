# Shared by the tests that run snapshot workers on other "hosts" over SSH
# (snapshot_ssh_hosts.sh, sync_snapshot_command.sh): two workers, worker2 at 127.0.0.2 and worker3
# at 127.0.0.3, each an sshd of its own started from Debian's openssh-server with a host key
# and a client key made for the test. The hosts share this machine's files and tools: what
# crosses the network is the work and the connections to the server. Not a test itself.
# Usage in a test, after lib.sh and live_lib.sh:
#   source "$(dirname "$0")/ssh_hosts_lib.sh"
#   ssh_hosts_require [TOOL...]   exit 77 (skipped) unless sshd, ssh, ssh-keygen and TOOLs are there
#   ssh_hosts_start || exit 1     starts both sshd's; sets ssh_config, the ssh -F file that
#                                 names worker2 and worker3, and ssh_cmd, "ssh -F $ssh_config"
#   ssh_hosts_stop                stops them (live_cleanup does too, through bg_pids)
# A worker's SSH_CONNECTION names the address it was reached at: its third word is 127.0.0.2
# or 127.0.0.3.

ssh_hosts_require() {
  local tool
  for tool in /usr/sbin/sshd ssh ssh-keygen "$@"; do
    if ! command -v "$tool" >/dev/null; then
      echo "skipped: $tool is not installed (Debian's openssh-server${*:+ and $*})"
      exit 77
    fi
  done
}

ssh_hosts_start() {
  ssh-keygen -q -t ed25519 -N '' -f "$work/host_key" || return 1
  ssh-keygen -q -t ed25519 -N '' -f "$work/client_key" || return 1
  cp "$work/client_key.pub" "$work/authorized_keys"
  chmod 600 "$work/authorized_keys"
  [[ $(id -u) == 0 ]] && mkdir -p /run/sshd # the privilege separation directory sshd wants as root
  local host port=$((20000 + RANDOM % 20000))
  ssh_config=$work/ssh_config
  : >"$ssh_config"
  ssh_hosts_pids=()
  for host in 2 3; do
    cat >"$work/sshd_config.$host" <<EOF
ListenAddress 127.0.0.$host:$port
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile $work/sshd.$host.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AcceptEnv LANG
EOF
    /usr/sbin/sshd -D -e -f "$work/sshd_config.$host" 2>"$work/sshd.$host.log" &
    ssh_hosts_pids+=($!)
    bg_pids+=($!)
    cat >>"$ssh_config" <<EOF
Host worker$host
  HostName 127.0.0.$host
  Port $port
  User $(id -un)
  IdentityFile $work/client_key
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
EOF
  done
  ssh_cmd="ssh -F $ssh_config"
  if wait_until 10 bash -c "$ssh_cmd worker2 true && $ssh_cmd worker3 true"; then
    assert "both workers answer over SSH" true
  else
    assert "both workers answer over SSH (see $work/sshd.*.log)" false
    return 1
  fi
}

ssh_hosts_stop() {
  local pid
  for pid in "${ssh_hosts_pids[@]}"; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  ssh_hosts_pids=()
}
