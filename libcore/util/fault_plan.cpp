#include "util/fault_plan.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>  // program_invocation_short_name
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace cdc::fault {

namespace {

enum class Planned : std::uint8_t { kill, term, drop, tear };

struct Step {
  std::string point;
  std::uint64_t pass = 0;
  Planned action = Planned::kill;
};

struct Counter {
  std::string point;
  std::uint64_t passes = 0;
};

struct Plan {
  bool enabled = false;
  std::vector<Step> steps;
  int trace_fd = -1;
  unsigned time_scale = 1;
  std::mutex mutex;  // the rows thread writes too
  std::vector<Counter> counters;
};

// "[PROGRAM@]POINT:N=ACTION,...": the entries for this program; a malformed entry is ignored
// (the test that set it sees no fault where it planned one, and fails).
std::vector<Step> parse(std::string_view text, std::string_view program) {
  std::vector<Step> steps;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (const std::size_t at = entry.find('@'); at != std::string_view::npos) {
      if (entry.substr(0, at) != program) continue;
      entry.remove_prefix(at + 1);
    }
    const std::size_t colon = entry.rfind(':');
    const std::size_t equals = entry.rfind('=');
    if (colon == std::string_view::npos || equals == std::string_view::npos || equals < colon) continue;
    Step step;
    step.point = std::string(entry.substr(0, colon));
    const std::string count(entry.substr(colon + 1, equals - colon - 1));
    step.pass = std::strtoull(count.c_str(), nullptr, 10);
    const std::string_view action = entry.substr(equals + 1);
    if (action == "kill")
      step.action = Planned::kill;
    else if (action == "term")
      step.action = Planned::term;
    else if (action == "drop")
      step.action = Planned::drop;
    else if (action == "tear")
      step.action = Planned::tear;
    else
      continue;
    if (step.pass > 0) steps.push_back(std::move(step));
  }
  return steps;
}

Plan& plan() {
  static Plan* const instance = [] {
    auto* made = new Plan;  // lives to the end of the process: points pass during exit too
    if (const char* text = std::getenv("CDC_FAULT_PLAN"); text && *text)
      made->steps = parse(text, program_invocation_short_name);
    if (const char* trace = std::getenv("CDC_FAULT_TRACE"); trace && *trace)
      made->trace_fd = ::open(trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    made->enabled = !made->steps.empty() || made->trace_fd >= 0;
    if (const char* scale = std::getenv("CDC_FAULT_TIME_SCALE"); made->enabled && scale && *scale)
      made->time_scale = static_cast<unsigned>(std::clamp(std::strtoul(scale, nullptr, 10), 1UL, 1000UL));
    return made;
  }();
  return *instance;
}

}  // namespace

bool enabled() noexcept { return plan().enabled; }

unsigned time_scale() noexcept { return plan().time_scale; }

Action at(std::string_view point) noexcept {
  Plan& state = plan();
  if (!state.enabled) return Action::none;
  std::uint64_t pass = 0;
  {
    const std::lock_guard<std::mutex> lock(state.mutex);
    Counter* counter = nullptr;
    for (auto& each : state.counters)
      if (each.point == point) counter = &each;
    if (!counter) counter = &state.counters.emplace_back(Counter{std::string(point), 0});
    pass = ++counter->passes;
    if (state.trace_fd >= 0) {
      std::string line(program_invocation_short_name);
      line += '@';
      line += point;
      line += ' ';
      line += std::to_string(pass);
      line += '\n';
      (void)!::write(state.trace_fd, line.data(), line.size());
    }
  }
  for (const auto& step : state.steps) {
    if (step.point != point || step.pass != pass) continue;
    switch (step.action) {
      case Planned::kill: ::raise(SIGKILL); break;
      case Planned::term: ::raise(SIGTERM); return Action::none;
      case Planned::drop: return Action::drop;
      case Planned::tear: return Action::tear;
    }
  }
  return Action::none;
}

}  // namespace cdc::fault
