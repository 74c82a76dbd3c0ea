#pragma once
// A bounded hand-over of call batches from the thread that reads the trace to the thread that
// matches it, so that SQLite's reading and the matching run on two cores at once. Either side may
// stop the other: the reader by closing (no more batches), the matcher by cancelling (take no more).
#include "trace_call_scan.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace commlens::analysis::detail {

class CallBatches {
public:
  using Batch = std::vector<ScannedCall>;

  explicit CallBatches(std::size_t capacity) : capacity_(capacity) {}

  // False once the matcher cancelled: the reader stops.
  bool push(Batch batch) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return cancelled_ || batches_.size() < capacity_; });
    if (cancelled_)
      return false;
    batches_.push_back(std::move(batch));
    ready_.notify_one();
    return true;
  }
  // Empty once the reader closed and every batch was taken.
  std::optional<Batch> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return closed_ || !batches_.empty(); });
    if (batches_.empty())
      return std::nullopt;
    Batch batch = std::move(batches_.front());
    batches_.pop_front();
    room_.notify_one();
    return batch;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    ready_.notify_all();
  }
  void cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    room_.notify_all();
  }

private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable room_;
  std::deque<Batch> batches_;
  bool closed_ = false;
  bool cancelled_ = false;
};

} // namespace commlens::analysis::detail
