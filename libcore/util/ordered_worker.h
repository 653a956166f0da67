#pragma once

// A thread that does the pieces of work handed to it one after the other, in the order they
// came, while the thread that hands them over goes on: cdc-stream's rows thread
// (stream::RowsWorker) and its conversion thread (stream::ConversionWorker) are one each.
//
// At most max_in_flight pieces are handed over and not yet done, so memory stays bounded and a
// slow output slows the producer. A piece is swapped with a done one, whose buffers the
// producer reuses (after Work::clear(), on the producer's thread: the work may hold what only
// that thread may let go of). After the first error nothing more is done; submit() and drain()
// return it. The destructor lets the thread finish what it holds, then joins it.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "util/result.h"

namespace cdc {

template <class Work>
class OrderedWorker {
 public:
  // On the worker's thread: does one piece, adding to `bytes` what it wrote (also when it fails
  // midway).
  using Process = std::function<Result<void>(Work& work, std::uint64_t& bytes)>;

  OrderedWorker(std::size_t max_in_flight, Process process)
      : max_in_flight_(max_in_flight), process_(std::move(process)), thread_([this] { run(); }) {}
  OrderedWorker(const OrderedWorker&) = delete;
  OrderedWorker& operator=(const OrderedWorker&) = delete;
  ~OrderedWorker() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  // Hands `work` over (swapped with a done one, cleared). Waits while max_in_flight are in
  // flight. The worker's first error, once it has failed.
  [[nodiscard]] Result<void> submit(Work& work) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return in_flight_.load(std::memory_order_relaxed) < max_in_flight_ || error_; });
    if (error_) return fail(*error_);
    std::unique_ptr<Work> handed;
    if (!spare_.empty()) {
      handed = std::move(spare_.back());
      spare_.pop_back();
    } else {
      handed = std::make_unique<Work>();
    }
    std::swap(*handed, work);  // the caller goes on with the spare's buffers
    work.clear();
    queue_.push_back(std::move(handed));
    in_flight_.fetch_add(1, std::memory_order_release);
    lock.unlock();
    changed_.notify_all();
    return {};
  }

  // Waits until every piece handed over is done; the bytes written since the last drain, or
  // the worker's error.
  [[nodiscard]] Result<std::uint64_t> drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return in_flight_.load(std::memory_order_relaxed) == 0 || error_; });
    if (error_) return fail(*error_);
    return std::exchange(written_, 0);
  }

  // Pieces handed over and not yet done (a hint: the worker may finish one meanwhile).
  [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_.load(std::memory_order_acquire); }

 private:
  void run() {
    for (;;) {
      std::unique_ptr<Work> work;
      bool failed_before = false;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        work = std::move(queue_.front());
        queue_.pop_front();
        failed_before = error_.has_value();
      }
      Result<void> done;
      std::uint64_t bytes = 0;
      if (!failed_before) done = process_(*work, bytes);  // after an error nothing more is done
      {
        const std::lock_guard lock(mutex_);
        written_ += bytes;
        if (!done && !error_) error_ = done.error();
        spare_.push_back(std::move(work));
        in_flight_.fetch_sub(1, std::memory_order_release);
      }
      changed_.notify_all();
    }
  }

  const std::size_t max_in_flight_;
  const Process process_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Work>> queue_;   // handed over, not yet done
  std::vector<std::unique_ptr<Work>> spare_;  // done, for reuse
  std::atomic<std::size_t> in_flight_{0};
  bool stopping_ = false;
  std::optional<Error> error_;
  std::uint64_t written_ = 0;  // since the last drain
  std::thread thread_;         // last: started once everything above is there
};

}  // namespace cdc
