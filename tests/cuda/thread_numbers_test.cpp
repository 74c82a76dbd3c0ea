// The mpi_calls.thread of a CUDA API call's thread, from its Linux thread id (thread_numbers.hpp).
#include "thread_numbers.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <thread>

namespace {

using commlens::cuda::mpi_thread_of;
using commlens::cuda::note_calling_thread;

// A call id: rank << 46 | thread << 36 | sequence (docs/schema.md).
std::uint64_t call_id(std::uint64_t rank, std::uint64_t thread, std::uint64_t sequence) {
  return rank << 46 | thread << 36 | sequence;
}

TEST(ThreadNumbers, EachThreadKeepsTheNumberOfItsFirstRecordedCall) {
  const auto main_thread = static_cast<std::uint32_t>(gettid());
  note_calling_thread(0); // not recorded: no number
  EXPECT_EQ(mpi_thread_of(main_thread), std::nullopt);
  note_calling_thread(call_id(3, 2, 1));
  note_calling_thread(call_id(3, 7, 2)); // cannot happen, and would not change it
  EXPECT_EQ(mpi_thread_of(main_thread), std::optional<std::uint32_t>(2));

  std::uint32_t other = 0;
  std::thread([&] {
    other = static_cast<std::uint32_t>(gettid());
    note_calling_thread(call_id(3, 5, 1));
  }).join();
  EXPECT_EQ(mpi_thread_of(other), std::optional<std::uint32_t>(5));
  EXPECT_EQ(mpi_thread_of(main_thread), std::optional<std::uint32_t>(2));
  EXPECT_EQ(mpi_thread_of(0), std::nullopt) << "a thread that made no call";
}

} // namespace
