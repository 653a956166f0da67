#pragma once

#include <optional>
#include <string>

namespace cdc::mysql {

// TLS modes as the mysql client spells them. MariaDB Connector/C has no single "ssl mode"
// switch, so connection.cpp maps each mode onto its TLS options (see there for the limits).
enum class SslMode { unset, disabled, preferred, required, verify_ca, verify_identity };

// What the user asked for; unset fields fall back to the option files ([client] and the
// defaults group) and then to the client library's defaults, as in the mysql client.
struct ConnectionOptions {
  std::optional<std::string> host;
  std::optional<unsigned> port;
  std::optional<std::string> user;
  std::optional<std::string> password;  // from -pSECRET / --password=SECRET or the prompt
  std::optional<std::string> socket;
  std::optional<std::string> defaults_file;
  std::string defaults_group = "cdc";   // read along with [client], [client-server], [client-mariadb]
  SslMode ssl_mode = SslMode::unset;
  std::optional<std::string> ssl_ca;
  // The client certificate and its key, for accounts created with REQUIRE X509 (or ISSUER,
  // SUBJECT); a file holding both may be given as either.
  std::optional<std::string> ssl_cert;
  std::optional<std::string> ssl_key;
  unsigned connect_timeout_seconds = 10;
  // 0: block forever. The replication connection sets it a little above the heartbeat period,
  // so a silently dead server is noticed.
  unsigned read_timeout_seconds = 0;
  // CLIENT_FOUND_ROWS: an UPDATE's affected rows are those it found, not those it changed
  // (cdc-apply checks that each update of the source found its row, also one already equal).
  bool found_rows = false;
};

}  // namespace cdc::mysql
