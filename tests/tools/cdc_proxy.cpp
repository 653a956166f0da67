// cdc-test-proxy: a TCP proxy between the tools and the server that breaks connections at
// seeded random moments, for the fault-injection proof (tests/integration/fault_proxy.sh).
//
// It listens on 127.0.0.1 (--listen-port, 0: any free port, written to --port-file once
// listening) and forwards each connection to --target-port. Every --min-interval to
// --max-interval seconds (uniform, drawn from one std::mt19937_64 seeded with --seed) it picks
// one open connection at random and does one of the --modes to it:
//   rst    close both sides with SO_LINGER 0: the tool and the server see a reset
//   fin    close both sides normally: the tool and the server see the end of the stream
//   stall  stop forwarding both ways for --stall-min to --stall-max seconds, then go on
// Each fault is one line on stderr. SIGUSR1 ends the faults (the proxy goes on forwarding, so
// that the tools can finish through it); SIGTERM or SIGINT ends it with a summary line
// ("cdc-test-proxy: N faults: R rst, F fin, S stall; C connections"). Single-threaded: poll().

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_quiet = 0;
void on_signal(int) { g_stop = 1; }
void on_quiet(int) { g_quiet = 1; }

constexpr std::size_t kBufferBytes = 64 * 1024;

// One direction of a connection: bytes read from `from` not yet written to `to`.
struct Direction {
  std::array<char, kBufferBytes> buffer{};
  std::size_t begin = 0;
  std::size_t end = 0;
  bool eof = false;  // `from` ended: shut `to` down for writing once the buffer is out
  bool shut = false;
  [[nodiscard]] bool empty() const { return begin == end; }
};

struct Pair {
  int number = 0;
  int client = -1;
  int server = -1;
  int client_port = 0;
  Direction up;    // client -> server
  Direction down;  // server -> client
  Clock::time_point stalled_until{};
  bool closed = false;
};

int make_nonblocking(int fd) { return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_pair(Pair& pair, bool reset) {
  if (reset) {
    const linger hard{1, 0};
    setsockopt(pair.client, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    setsockopt(pair.server, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  }
  close(pair.client);
  close(pair.server);
  pair.closed = true;
}

// Moves bytes one way: reads when the buffer is empty, writes what it holds. Returns false
// when the connection is to be closed (an error on either side).
bool pump(Direction& d, int from, int to, short from_events, short to_events) {
  if (d.empty() && !d.eof && (from_events & (POLLIN | POLLHUP | POLLERR))) {
    const ssize_t n = read(from, d.buffer.data(), d.buffer.size());
    if (n > 0) {
      d.begin = 0;
      d.end = static_cast<std::size_t>(n);
    } else if (n == 0) {
      d.eof = true;
    } else if (errno != EAGAIN && errno != EINTR) {
      return false;
    }
  }
  if (!d.empty()) {  // nonblocking: EAGAIN when `to` is full
    (void)to_events;
    const ssize_t n = write(to, d.buffer.data() + d.begin, d.end - d.begin);
    if (n > 0)
      d.begin += static_cast<std::size_t>(n);
    else if (n < 0 && errno != EAGAIN && errno != EINTR)
      return false;
  }
  if (d.eof && d.empty() && !d.shut) {
    shutdown(to, SHUT_WR);
    d.shut = true;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned listen_port = 0;
  unsigned target_port = 0;
  std::string port_file;
  std::uint64_t seed = 1;
  double min_interval = 0.5;
  double max_interval = 2.0;
  double stall_min = 1.0;
  double stall_max = 4.0;
  std::vector<std::string> modes{"rst", "fin", "stall"};
  CLI::App app{
      "cdc-test-proxy - a TCP proxy on 127.0.0.1 that cuts (rst, fin) or stalls connections at seeded random "
      "moments (test tool, not installed)."};
  app.add_option("--listen-port", listen_port, "Port to listen on (0: any free one). Default: 0");
  app.add_option("--port-file", port_file, "Write the port listened on to this file once listening");
  app.add_option("--target-port", target_port, "Server port on 127.0.0.1")->required();
  app.add_option("--seed", seed, "Seed of every random choice")->required();
  app.add_option("--min-interval", min_interval, "Fewest seconds between faults. Default: 0.5");
  app.add_option("--max-interval", max_interval, "Most seconds between faults. Default: 2");
  app.add_option("--stall-min", stall_min, "Shortest stall, seconds. Default: 1");
  app.add_option("--stall-max", stall_max, "Longest stall, seconds. Default: 4");
  app.add_option("--modes", modes, "Faults to draw from: rst, fin, stall. Default: all three")
      ->delimiter(',')
      ->check(CLI::IsMember({"rst", "fin", "stall"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  if (min_interval <= 0 || max_interval < min_interval || stall_min < 0 || stall_max < stall_min) {
    fmt::print(stderr, "cdc-test-proxy: want 0 < --min-interval <= --max-interval and 0 <= --stall-min <= --stall-max\n");
    return 2;
  }

  struct sigaction action{};
  action.sa_handler = on_signal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  struct sigaction quiet{};
  quiet.sa_handler = on_quiet;
  sigaction(SIGUSR1, &quiet, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int yes = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(listen_port));
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(listener, 64) != 0) {
    fmt::print(stderr, "cdc-test-proxy: cannot listen on 127.0.0.1:{}: {}\n", listen_port, std::strerror(errno));
    return 1;
  }
  socklen_t length = sizeof address;
  getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  const unsigned port = ntohs(address.sin_port);
  make_nonblocking(listener);
  if (!port_file.empty()) {
    // Written whole under another name, then renamed: a reader never sees half a number.
    const std::string temp = port_file + ".tmp";
    std::FILE* file = std::fopen(temp.c_str(), "w");
    if (file == nullptr || std::fprintf(file, "%u\n", port) < 0 || std::fclose(file) != 0 ||
        std::rename(temp.c_str(), port_file.c_str()) != 0) {
      fmt::print(stderr, "cdc-test-proxy: cannot write {}: {}\n", port_file, std::strerror(errno));
      return 1;
    }
  }
  fmt::print(stderr, "cdc-test-proxy: 127.0.0.1:{} -> 127.0.0.1:{}, seed {}, a fault every {}-{} s ({})\n", port,
             target_port, seed, min_interval, max_interval, fmt::join(modes, ","));

  std::mt19937_64 random(seed);
  auto draw = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(random); };
  auto seconds = [](double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); };
  Clock::time_point next_fault = Clock::now() + seconds(draw(min_interval, max_interval));
  std::vector<std::unique_ptr<Pair>> pairs;
  int connections = 0;
  int rst = 0;
  int fin = 0;
  int stall = 0;

  while (!g_stop) {
    const auto now = Clock::now();
    if (g_quiet && now >= next_fault) {
      fmt::print(stderr, "cdc-test-proxy: SIGUSR1: no more faults\n");
      next_fault = Clock::time_point::max();
    } else if (now >= next_fault) {
      next_fault = now + seconds(draw(min_interval, max_interval));
      if (!pairs.empty()) {
        Pair& victim = *pairs[std::uniform_int_distribution<std::size_t>(0, pairs.size() - 1)(random)];
        const std::string& mode = modes[std::uniform_int_distribution<std::size_t>(0, modes.size() - 1)(random)];
        if (mode == "stall") {
          const double s = draw(stall_min, stall_max);
          victim.stalled_until = now + seconds(s);
          ++stall;
          fmt::print(stderr, "cdc-test-proxy: fault {}: stall connection #{} (client port {}) for {:.1f} s\n",
                     rst + fin + stall, victim.number, victim.client_port, s);
        } else {
          close_pair(victim, mode == "rst");
          ++(mode == "rst" ? rst : fin);
          fmt::print(stderr, "cdc-test-proxy: fault {}: {} connection #{} (client port {})\n", rst + fin + stall,
                     mode, victim.number, victim.client_port);
        }
      }
    }
    std::erase_if(pairs, [](const std::unique_ptr<Pair>& p) { return p->closed; });

    std::vector<pollfd> fds{{listener, POLLIN, 0}};
    for (const auto& p : pairs) {
      const bool stalled = Clock::now() < p->stalled_until;
      short client_events = 0;
      short server_events = 0;
      if (!stalled) {
        if (p->up.empty() && !p->up.eof) client_events |= POLLIN;
        if (!p->down.empty()) client_events |= POLLOUT;
        if (p->down.empty() && !p->down.eof) server_events |= POLLIN;
        if (!p->up.empty()) server_events |= POLLOUT;
      }
      fds.push_back({p->client, client_events, 0});
      fds.push_back({p->server, server_events, 0});
    }
    // At most 100 ms, so that signals and stall ends are seen in time (next_fault may be max()).
    const auto now_after = Clock::now();
    const long long wait =
        next_fault - now_after > std::chrono::milliseconds(100)
            ? 100
            : std::chrono::duration_cast<std::chrono::milliseconds>(next_fault - now_after).count();
    const int timeout = static_cast<int>(std::clamp<long long>(wait, 0, 100));
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      fmt::print(stderr, "cdc-test-proxy: poll: {}\n", std::strerror(errno));
      return 1;
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      Pair& p = *pairs[i];
      if (Clock::now() < p.stalled_until) continue;
      const short ce = fds[1 + 2 * i].revents;
      const short se = fds[2 + 2 * i].revents;
      const bool ok = pump(p.up, p.client, p.server, ce, se) && pump(p.down, p.server, p.client, se, ce);
      if (!ok || (p.up.shut && p.down.shut)) close_pair(p, false);
    }
    if (fds[0].revents & POLLIN) {
      while (true) {
        sockaddr_in peer{};
        socklen_t peer_length = sizeof peer;
        const int client = accept(listener, reinterpret_cast<sockaddr*>(&peer), &peer_length);
        if (client < 0) break;
        const int server = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in target{};
        target.sin_family = AF_INET;
        target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        target.sin_port = htons(static_cast<std::uint16_t>(target_port));
        // A blocking connect to loopback: immediate, or refused (then the client is closed).
        if (connect(server, reinterpret_cast<sockaddr*>(&target), sizeof target) != 0) {
          close(server);
          close(client);
          continue;
        }
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        make_nonblocking(client);
        make_nonblocking(server);
        auto pair = std::make_unique<Pair>();
        pair->number = ++connections;
        pair->client = client;
        pair->server = server;
        pair->client_port = ntohs(peer.sin_port);
        pairs.push_back(std::move(pair));
      }
    }
  }
  for (auto& p : pairs)
    if (!p->closed) close_pair(*p, false);
  fmt::print(stderr, "cdc-test-proxy: {} faults: {} rst, {} fin, {} stall; {} connections\n", rst + fin + stall, rst,
             fin, stall, connections);
  return 0;
}
