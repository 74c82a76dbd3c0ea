#include "thread_numbers.hpp"

#include "commlens/profiler/call_lanes.hpp"

#include <unistd.h>

#include <mutex>
#include <new>
#include <unordered_map>

namespace commlens::cuda {

namespace {

thread_local bool thread_noted = false;
std::mutex numbers_mutex;
std::unordered_map<std::uint32_t, std::uint32_t> numbers; // Linux thread id -> mpi_calls.thread

} // namespace

void note_calling_thread(std::uint64_t call_id) noexcept {
  if (thread_noted || call_id == 0) {
    return;
  }
  const auto number = static_cast<std::uint32_t>(call_lanes::thread_of(static_cast<std::int64_t>(call_id)));
  try {
    const std::lock_guard lock(numbers_mutex);
    numbers.emplace(static_cast<std::uint32_t>(gettid()), number);
    thread_noted = true;
  } catch (const std::bad_alloc&) {
    // Unnoted: the thread's API calls keep only their Linux thread id.
  }
}

std::optional<std::uint32_t> mpi_thread_of(std::uint32_t system_thread) {
  const std::lock_guard lock(numbers_mutex);
  const auto found = numbers.find(system_thread);
  return found != numbers.end() ? std::optional(found->second) : std::nullopt;
}

} // namespace commlens::cuda
