#pragma once
// The extra streams a rank spreads a tree's segments over (collectives/pipeline/), beside the
// stream its calls run on: created on first use, kept for the owner's life (an engine's for the
// calls of the calling thread, a nonblocking lane's for its jobs), destroyed with it.
#include <cstdint>
#include <vector>

namespace commlens::runtime {

class StreamSet {
public:
  // non_blocking: the streams do not synchronise with the legacy default stream (a lane's, like
  // its own stream); else they do, like the engine's stream.
  explicit StreamSet(bool non_blocking) noexcept : non_blocking_(non_blocking) {}
  ~StreamSet();
  StreamSet(const StreamSet&) = delete;
  StreamSet& operator=(const StreamSet&) = delete;

  // `first`, then up to count - 1 streams of the set (count at least 1); fewer when a stream
  // cannot be created (the call then runs on those it has).
  std::vector<void*> with(void* first, std::uint32_t count);

private:
  bool non_blocking_;
  std::vector<void*> streams_;
};

} // namespace commlens::runtime
