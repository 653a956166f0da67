#!/usr/bin/env bash
# TLS against a real TLS server: a throwaway MariaDB of its own with a certificate made here by
# openssl (a CA, a server certificate for IP:127.0.0.1 and DNS:localhost, a client certificate,
# and a second, unrelated CA). The server listens on 127.0.0.1 and 127.0.0.2: both are the
# loopback, but only the first is in the certificate. Two accounts: tls_ssl REQUIRE SSL and
# tls_x509 REQUIRE X509. For every tool that connects (cdc-plan --check and planning,
# cdc-snapshot, cdc-stream over the replication protocol, cdc-sync end to end) the --ssl-mode
# semantics that the man pages promise:
#   REQUIRED         TLS, the certificate not checked (not its host name; its chain only when
#                    --ssl-ca is given, as in every mode: a wrong one is refused);
#   PREFERRED        TLS when the server has it (so a REQUIRE SSL account gets in);
#   default          no TLS: a REQUIRE SSL account is refused, with a hint naming TLS;
#   VERIFY_CA        the chain against --ssl-ca: right CA in, wrong CA out (exit 69, the error
#                    says TLS and certificate), and 127.0.0.2 (not in the certificate) is fine;
#   VERIFY_IDENTITY  also the host name: 127.0.0.1 and localhost (the socket) in, 127.0.0.2 out
#                    with an error naming the host;
#   X509             in with --ssl-cert/--ssl-key, refused without them with a hint naming them;
#   DISABLED         no TLS, even with --ssl-ca given: the REQUIRE SSL account is refused.
# VERIFY_CA and VERIFY_IDENTITY without --ssl-ca trust the system's authorities only, so they
# refuse this server. Then option files' ssl-ca lines (cdc-plan only: the library reads them,
# the same for every tool), which win over the command line (BUGS in cdc-plan(1)): each such
# case is either harmless or an error that says so. Then a live cdc-stream as the X509 account with VERIFY_IDENTITY: a change made after its start
# arrives (the replication stream runs over TLS; the account admits no other way).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
if ! command -v openssl >/dev/null; then
  echo "skipped: openssl is not installed (it makes the test's certificates)"
  exit 77
fi

# ---- the certificates ----
certs="$work/certs"
mkdir -p "$certs"
make_certificates() {
  cd "$certs" || return 1
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cdc test CA" -keyout ca.key -out ca.pem &&
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cdc wrong CA" -keyout wrong-ca.key -out wrong-ca.pem &&
    openssl req -newkey rsa:2048 -nodes -subj "/CN=cdc test server" -keyout server.key -out server.csr &&
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext &&
    openssl x509 -req -days 2 -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile server.ext -out server.pem &&
    openssl req -newkey rsa:2048 -nodes -subj "/CN=cdc test client" -keyout client.key -out client.csr &&
    openssl x509 -req -days 2 -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem
}
if ! (make_certificates) >"$work/openssl.log" 2>&1; then
  echo "FAIL openssl could not make the certificates:"
  tail -5 "$work/openssl.log"
  exit 1
fi
ca="$certs/ca.pem" wrong_ca="$certs/wrong-ca.pem"

# ---- the server ----
throwaway_start "$srv" --ssl-cert="$certs/server.pem" --ssl-key="$certs/server.key" --ssl-ca="$ca" \
  --bind-address=127.0.0.1,127.0.0.2 || exit 1
root <<'SQL' || exit 1
CREATE DATABASE t;
CREATE TABLE t.a (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
INSERT INTO t.a VALUES (1, 'one'), (2, 'two');
CREATE USER 'tls_ssl'@'127.0.0.1' IDENTIFIED BY 'ssl-secret' REQUIRE SSL;
CREATE USER 'tls_ssl'@'localhost' IDENTIFIED BY 'ssl-secret' REQUIRE SSL;
CREATE USER 'tls_x509'@'127.0.0.1' IDENTIFIED BY 'x509-secret' REQUIRE X509;
CREATE USER 'tls_x509'@'localhost' IDENTIFIED BY 'x509-secret' REQUIRE X509;
GRANT SELECT, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'tls_ssl'@'127.0.0.1', 'tls_ssl'@'localhost';
GRANT SELECT, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'tls_x509'@'127.0.0.1', 'tls_x509'@'localhost';
SQL
assert "the server has TLS" test "$(root -N -e 'SELECT @@have_ssl')" == YES

# A plan for cdc-snapshot, made once.
MYSQL_PWD=ssl-secret "$tools_dir/cdc-plan" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u tls_ssl --ssl-mode REQUIRED \
  --tables t.a >"$work/plan.ndjson" 2>"$work/plan.err"
assert "a plan for the snapshot runs" grep -q '"op":"chunk"' "$work/plan.ndjson"

# ---- every tool, every mode ----
tcp=(-h 127.0.0.1 -P "$THROWAWAY_PORT")
alias=(-h 127.0.0.2 -P "$THROWAWAY_PORT") # the loopback too, but a name the certificate lacks
socket=(-h localhost -S "$THROWAWAY_SOCKET")
client_cert=(--ssl-cert "$certs/client.pem" --ssl-key "$certs/client.key")
sync_runs=0

# as USER TOOL ARGS...: TOOL (plan_check, plan, snapshot, stream, sync) as USER with ARGS, its
# connection options; a hang fails as exit 124.
as() {
  local user=$1 tool=$2 password
  shift 2
  [[ $user == tls_ssl ]] && password=ssl-secret || password=x509-secret
  local command=()
  case $tool in
    plan_check) command=("$tools_dir/cdc-plan" --check) ;;
    plan) command=("$tools_dir/cdc-plan" --tables t.a) ;;
    snapshot) command=("$tools_dir/cdc-snapshot" "$work/plan.ndjson") ;;
    stream) command=("$tools_dir/cdc-stream" --from earliest --until now) ;;
    sync)
      sync_runs=$((sync_runs + 1))
      # --retry-for 1: cdc-sync runs a tool that exits 69 again, and a refused TLS setting
      # exits 69 like a server that is down (for 60 s by default).
      command=(env CDC_TOOLS_DIR="$tools_dir" "$tools_dir/cdc-sync" --tables t.a --mode initial_only
        --no-progress --retry-for 1 --dir "$work/sync.$sync_runs") ;;
  esac
  MYSQL_PWD=$password timeout -k 5 120 "${command[@]}" -u "$user" "$@"
}
# What a tool's successful output must hold: the server's data came through.
declare -A output_marker=(
  [plan_check]='"op":"check"' [plan]='"op":"chunk"' [snapshot]='"op":"r"'
  [stream]='"op":"c".*"v":"two"' [sync]='"op":"r".*"v":"two"')

# works NAME USER TOOL ARGS...: exit 0 with the tool's data on stdout.
works() {
  local name=$1 user=$2 tool=$3
  shift 3
  expect "$tool: $name" 0 as "$user" "$tool" "$@"
  assert "$tool: $name: the data came through" grep -q -E "${output_marker[$tool]}" "$work/out"
}
# refused NAME USER TOOL PATTERN ARGS...: exit 69, stderr matches PATTERN (grep -E).
refused() {
  local name=$1 user=$2 tool=$3 pattern=$4
  shift 4
  expect "$tool: $name exits 69" 69 as "$user" "$tool" "$@"
  assert "$tool: $name: the error says why" grep -q -E -- "$pattern" "$work/err"
}

for tool in plan_check plan snapshot stream sync; do
  works "REQUIRED" tls_ssl "$tool" "${tcp[@]}" --ssl-mode REQUIRED
  works "REQUIRED does not check the host name" tls_ssl "$tool" "${alias[@]}" --ssl-mode REQUIRED
  works "PREFERRED uses TLS when the server has it" tls_ssl "$tool" "${tcp[@]}" --ssl-mode PREFERRED
  refused "no --ssl-mode: no TLS, so a REQUIRE SSL account" tls_ssl "$tool" \
    "Access denied.*REQUIRE SSL.*--ssl-mode" "${tcp[@]}"
  refused "DISABLED with a REQUIRE SSL account" tls_ssl "$tool" \
    "Access denied.*REQUIRE SSL.*--ssl-mode" "${tcp[@]}" --ssl-mode DISABLED
  refused "DISABLED ignores --ssl-ca" tls_ssl "$tool" "Access denied" "${tcp[@]}" --ssl-mode DISABLED --ssl-ca "$ca"
  works "VERIFY_CA with the right CA" tls_ssl "$tool" "${tcp[@]}" --ssl-mode VERIFY_CA --ssl-ca "$ca"
  works "VERIFY_CA does not check the host name" tls_ssl "$tool" "${alias[@]}" --ssl-mode VERIFY_CA --ssl-ca "$ca"
  refused "VERIFY_CA with the wrong CA" tls_ssl "$tool" "TLS.*certificate.*--ssl-ca" \
    "${tcp[@]}" --ssl-mode VERIFY_CA --ssl-ca "$wrong_ca"
  refused "REQUIRED with the wrong --ssl-ca" tls_ssl "$tool" "TLS.*certificate.*--ssl-ca" \
    "${tcp[@]}" --ssl-mode REQUIRED --ssl-ca "$wrong_ca"
  # Without --ssl-ca the system's authorities are the trusted ones, and the test CA is not
  # among them: a mode that skipped the check would let this through.
  refused "VERIFY_CA without --ssl-ca" tls_ssl "$tool" "TLS.*certificate" "${tcp[@]}" --ssl-mode VERIFY_CA
  refused "VERIFY_IDENTITY without --ssl-ca" tls_ssl "$tool" "TLS.*certificate" "${tcp[@]}" --ssl-mode VERIFY_IDENTITY
  works "VERIFY_IDENTITY to 127.0.0.1" tls_ssl "$tool" "${tcp[@]}" --ssl-mode VERIFY_IDENTITY --ssl-ca "$ca"
  works "VERIFY_IDENTITY to localhost (the socket)" tls_ssl "$tool" "${socket[@]}" --ssl-mode VERIFY_IDENTITY --ssl-ca "$ca"
  refused "VERIFY_IDENTITY to a name not in the certificate" tls_ssl "$tool" \
    "certificate does not name the host '127\.0\.0\.2'" "${alias[@]}" --ssl-mode VERIFY_IDENTITY --ssl-ca "$ca"
  refused "VERIFY_IDENTITY with the wrong CA" tls_ssl "$tool" "TLS.*certificate.*--ssl-ca" \
    "${tcp[@]}" --ssl-mode VERIFY_IDENTITY --ssl-ca "$wrong_ca"
  works "REQUIRE X509 with --ssl-cert/--ssl-key" tls_x509 "$tool" "${tcp[@]}" --ssl-mode VERIFY_IDENTITY --ssl-ca "$ca" \
    "${client_cert[@]}"
  refused "REQUIRE X509 without a client certificate" tls_x509 "$tool" "Access denied.*REQUIRE X509.*--ssl-cert" \
    "${tcp[@]}" --ssl-mode VERIFY_IDENTITY --ssl-ca "$ca"
done

# ---- TLS settings from an option file (read by the client library; the same for every tool) ----
option_file() { # option_file NAME CA: a [client] group with ssl-ca = CA
  printf '[client]\nssl-ca = %s\n' "$2" >"$work/$1.cnf"
  echo "$work/$1.cnf"
}
works "an option file's ssl-ca turns TLS on" tls_ssl plan_check --defaults-file "$(option_file right "$ca")" "${tcp[@]}"
refused "an option file's ssl-ca is checked" tls_ssl plan_check "TLS.*certificate.*--ssl-ca" \
  --defaults-file "$(option_file wrong "$wrong_ca")" "${tcp[@]}"
# The library reads the option files while it connects, after the command line's TLS options
# are set, so theirs win (man cdc-plan, BUGS). DISABLED then still uses TLS; a --ssl-ca that an
# option file replaced is an error that says so, whether the file's CA fails or passes.
works "the option file's ssl-ca wins over DISABLED (BUGS)" tls_ssl plan_check \
  --defaults-file "$(option_file right "$ca")" "${tcp[@]}" --ssl-mode DISABLED
refused "DISABLED with an option file's failing ssl-ca" tls_ssl plan_check \
  "DISABLED cannot keep the option files' TLS settings .*wrong-ca.pem" \
  --defaults-file "$(option_file wrong "$wrong_ca")" "${tcp[@]}" --ssl-mode DISABLED
refused "an option file's failing ssl-ca that replaced --ssl-ca" tls_ssl plan_check \
  "option files' ssl-ca .*wrong-ca.pem.* replaced --ssl-ca" \
  --defaults-file "$(option_file wrong "$wrong_ca")" "${tcp[@]}" --ssl-mode VERIFY_CA --ssl-ca "$ca"
expect "plan_check: an option file's passing ssl-ca that replaced --ssl-ca exits 2" 2 \
  as tls_ssl plan_check --defaults-file "$(option_file right "$ca")" "${tcp[@]}" --ssl-mode VERIFY_CA --ssl-ca "$wrong_ca"
assert "plan_check: an option file's passing ssl-ca that replaced --ssl-ca: the error says so" \
  grep -q "option files' ssl-ca .*/ca.pem.* replaced --ssl-ca .*wrong-ca.pem" "$work/err"
works "the same ssl-ca in the option file and on the command line" tls_ssl plan_check \
  --defaults-file "$(option_file right "$ca")" "${tcp[@]}" --ssl-mode VERIFY_CA --ssl-ca "$ca"

# ---- the replication stream, live, over TLS ----
MYSQL_PWD=x509-secret "$tools_dir/cdc-stream" "${tcp[@]}" -u tls_x509 --ssl-mode VERIFY_IDENTITY --ssl-ca "$ca" \
  "${client_cert[@]}" --from now >"$work/live.ndjson" 2>"$work/live.err" &
bg_pids+=($!)
live_pid=$!
wait_dump_threads 1
assert "live: the X509 account's stream registered with the server" test "$(dump_threads)" == 1
root -e "INSERT INTO t.a VALUES (3, 'over tls')"
wait_for_text "$work/live.ndjson" '"over tls"' 20
assert "live: a change made after the start arrives over TLS" grep -q '"op":"c".*"over tls"' "$work/live.ndjson"
kill -TERM "$live_pid" 2>/dev/null
wait_exit "$live_pid" 20
bg_pids=()
assert "live: SIGTERM ends it with exit 0" test "$status" == 0
finish
