#!/usr/bin/env bash
# Every way an operator gives credentials, as with the mysql client: -pSECRET, --password=,
# MYSQL_PWD, --defaults-file with [client] or a named group, the socket, and the prompt.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
plan="$tools_dir/cdc-plan"
tcp=(-h 127.0.0.1 -P "$CDC_TEST_PORT" -u "$CDC_TEST_USER")

expect "-pSECRET" 0 "$plan" --check "${tcp[@]}" "-p$CDC_TEST_PASSWORD"
expect "--password=SECRET" 0 "$plan" --check "${tcp[@]}" "--password=$CDC_TEST_PASSWORD"
expect "MYSQL_PWD" 0 env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check "${tcp[@]}"
expect "wrong password exits 69" 69 "$plan" --check "${tcp[@]}" -pwrong
assert "wrong password is explained" grep -q "Access denied.*check --user and the password" "$work/err"
expect "no password exits 69" 69 env -u MYSQL_PWD "$plan" --check "${tcp[@]}"
expect "the argv password wins over MYSQL_PWD" 0 \
  env MYSQL_PWD=wrong "$plan" --check "${tcp[@]}" "-p$CDC_TEST_PASSWORD"

cat >"$work/client.cnf" <<CNF
[client]
host = 127.0.0.1
port = $CDC_TEST_PORT
user = $CDC_TEST_USER
password = $CDC_TEST_PASSWORD
CNF
expect "--defaults-file [client]" 0 env -u MYSQL_PWD "$plan" --check --defaults-file "$work/client.cnf"

cat >"$work/group.cnf" <<CNF
[client]
host = 127.0.0.1
port = $CDC_TEST_PORT
user = nobody
password = wrong
[nightly]
user = $CDC_TEST_USER
password = $CDC_TEST_PASSWORD
CNF
expect "--defaults-group overrides [client]" 0 \
  env -u MYSQL_PWD "$plan" --check --defaults-file "$work/group.cnf" --defaults-group nightly
expect "without the group, [client]'s wrong user is used" 69 \
  env -u MYSQL_PWD "$plan" --check --defaults-file "$work/group.cnf"
expect "command-line options win over the option file" 0 \
  env -u MYSQL_PWD "$plan" --check --defaults-file "$work/group.cnf" -u "$CDC_TEST_USER" "-p$CDC_TEST_PASSWORD"

expect "-S socket (cdc@localhost)" 0 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check -S "$CDC_TEST_SOCKET" -u "$CDC_TEST_USER"
expect "--ssl-mode=DISABLED connects" 0 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check "${tcp[@]}" --ssl-mode=DISABLED
expect "--ssl-mode=REQUIRED on a server without TLS exits 69" 69 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check "${tcp[@]}" --ssl-mode=REQUIRED
assert "and says TLS was refused" grep -q "did not agree to TLS" "$work/err"
expect "--ssl-mode=VERIFY_IDENTITY on a server without TLS exits 69" 69 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check "${tcp[@]}" --ssl-mode=VERIFY_IDENTITY
# VERIFY_CA with --ssl-ca checks the chain without the library's server-certificate flag,
# which alone would refuse a server without TLS: the check after the handshake must.
: >"$work/ca.pem"
expect "--ssl-mode=VERIFY_CA --ssl-ca on a server without TLS exits 69" 69 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check "${tcp[@]}" --ssl-mode=VERIFY_CA --ssl-ca "$work/ca.pem"
assert "and says TLS was refused" grep -q "did not agree to TLS" "$work/err"
expect "--ssl-mode=PREFERRED on a server without TLS connects in plain text" 0 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check "${tcp[@]}" --ssl-mode=PREFERRED

# -p alone prompts on the terminal; script(1) gives the tool one and types the password.
if command -v script >/dev/null; then
  status=0
  # The delay lets the prompt turn echo off before the password is "typed".
  (sleep 1; printf '%s\n' "$CDC_TEST_PASSWORD") | env -u MYSQL_PWD script -qec \
    "$plan --check -h 127.0.0.1 -P $CDC_TEST_PORT -u $CDC_TEST_USER -p" /dev/null >"$work/tty" 2>&1 || status=$?
  assert "-p alone prompts and connects" test "$status" = 0
  assert "the prompt was shown" grep -q "Enter password:" "$work/tty"
  assert "the typed password is not echoed" bash -c "! grep -q -- '$CDC_TEST_PASSWORD' '$work/tty'"
fi

finish
