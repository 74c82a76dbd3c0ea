#pragma once
// Where the fuzzer's sub-buffers go inside its long-lived arena (no CUDA: unit-tested on any
// machine). They are taken round the arena at random small offsets, so released ones are handed
// out again at shifted addresses, but never over a sub-buffer still in use: one call's send and
// receive buffers must not overlap (MPI forbids it, and filling one would clobber the other).
#include <cstddef>
#include <optional>
#include <random>
#include <vector>

namespace fuzz {

class SubBufferArena {
public:
  explicit SubBufferArena(std::size_t arena_bytes) : arena_bytes_(arena_bytes) {}

  // Whether `bytes` aligned to `alignment` fit the arena at all (with room for the random offset).
  bool fits(std::size_t bytes, std::size_t alignment) const { return bytes + alignment * 64 <= arena_bytes_; }
  // The offset of a new sub-buffer of `bytes` (fits() must hold), aligned to `alignment` and now and
  // then one byte off; nullopt when the place drawn overlaps a sub-buffer still in use.
  std::optional<std::size_t> place(std::size_t bytes, std::size_t alignment, std::mt19937_64& random);
  // The sub-buffer at `offset` is no longer in use.
  void release(std::size_t offset);

private:
  struct Range {
    std::size_t offset;
    std::size_t bytes;
  };

  std::size_t arena_bytes_;
  std::size_t cursor_ = 0;
  std::vector<Range> in_use_;
};

} // namespace fuzz
