#include "sub_buffer_arena.hpp"

#include <algorithm>

namespace fuzz {

std::optional<std::size_t> SubBufferArena::place(std::size_t bytes, std::size_t alignment,
                                                 std::mt19937_64& random) {
  // Aligned to the element, as allocators and tensor views give them, not to 16 bytes; now and
  // then one byte off, which the runtime's kernels cannot load and must decline.
  std::size_t start = (cursor_ + alignment - 1) / alignment * alignment;
  const std::size_t shift = (random() % 64) * alignment + (alignment > 1 && random() % 16 == 0 ? 1 : 0);
  if (start + shift + bytes > arena_bytes_) {
    start = 0;
  }
  const std::size_t offset = start + shift;
  const bool overlaps = std::ranges::any_of(in_use_, [&](const Range& used) {
    return offset < used.offset + used.bytes && used.offset < offset + bytes;
  });
  if (overlaps) {
    return std::nullopt;
  }
  cursor_ = offset + bytes;
  in_use_.push_back({offset, bytes});
  return offset;
}

void SubBufferArena::release(std::size_t offset) {
  std::erase_if(in_use_, [&](const Range& used) { return used.offset == offset; });
}

} // namespace fuzz
