// The nonblocking collectives' fallback through node shared memory
// (runtime/transport/shared_memory_collectives.hpp) between real MPI processes on host buffers, no
// GPU needed (run with several ranks: mpirun -np 4 --oversubscribe). Each rank computes every
// rank's input itself, so the expected result is folded here in rank order with the GPU programs'
// host reference (programs/reduction_reference.hpp) and compared bitwise: floating-point inputs
// are not integers, so a different order shows. Counts cross the stages' chunk size. Also: the
// 16-bit float conversions, MPI's own results on exact data, non-contiguous allgather blocks, a
// bcast from every root, a rank whose datatypes cannot be described, blocks of different sizes,
// and a rank whose copies fail: every rank must return the same outcome and the next call must still run (no
// rank left behind at a barrier).
#include "programs/reduction_reference.hpp"
#include "transport/host_reduction.hpp"
#include "transport/node_segment.hpp"
#include "transport/shared_memory_collectives.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

namespace commlens::runtime {
namespace {

using reference::combine;
using reference::mix;

struct World {
  int rank = 0;
  int size = 0;
  NodeSegment segment;
  SharedStages stages;
  std::uint64_t barriers = 0;
  int failing_rank = -1; // this rank's copies fail

  World() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::string error;
    if (!segment.open(MPI_COMM_WORLD, rank, size, &error) || !stages.open(MPI_COMM_WORLD, rank, size)) {
      std::fprintf(stderr, "rank %d: node shared memory: %s\n", rank, error.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  StageContext context() {
    return {stages, [this] { segment.barrier(++barriers); },
            [this](void* destination, const void* source, std::size_t bytes) {
              if (rank == failing_rank) {
                return false;
              }
              std::memcpy(destination, source, bytes);
              return true;
            }};
  }
};

World& world() {
  static World instance;
  return instance;
}

template <typename T> constexpr ElementType element_type() {
  if constexpr (std::is_same_v<T, std::int8_t>) {
    return ElementType::Int8;
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return ElementType::UInt16;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return ElementType::Int32;
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    return ElementType::UInt64;
  } else if constexpr (std::is_same_v<T, float>) {
    return ElementType::Float32;
  } else {
    return ElementType::Float64;
  }
}

// Rank r's input: integers of every bit pattern, floats with fractions and signs (order matters).
template <typename T> std::vector<T> input_of(int rank, std::size_t count, std::uint64_t seed) {
  std::vector<T> values(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t bits = mix(seed ^ (static_cast<std::uint64_t>(rank) << 48) ^ i);
    if constexpr (std::is_floating_point_v<T>) {
      values[i] = static_cast<T>(static_cast<double>(bits % 2000003) / 997.0 - 1000.0);
    } else {
      values[i] = static_cast<T>(bits);
    }
  }
  return values;
}

template <typename T> std::vector<T> folded(reference::Op op, std::size_t count, std::uint64_t seed) {
  std::vector<T> result = input_of<T>(0, count, seed);
  for (int rank = 1; rank < world().size; ++rank) {
    const std::vector<T> next = input_of<T>(rank, count, seed);
    for (std::size_t i = 0; i < count; ++i) {
      result[i] = combine(op, result[i], next[i]);
    }
  }
  return result;
}

ReduceOp reduce_op(reference::Op op) {
  return static_cast<ReduceOp>(static_cast<int>(op)); // the same order: Sum ... Bxor
}

const std::size_t kCounts[] = {1, 5, 4099};

template <typename T> void check_allreduce(std::initializer_list<reference::Op> ops) {
  World& w = world();
  std::uint64_t seed = 17;
  for (const reference::Op op : ops) {
    for (const std::size_t count :
         {kCounts[0], kCounts[1], kStageBytes / sizeof(T) + 3, 2 * kStageBytes / sizeof(T)}) {
      for (const bool in_place : {false, true}) {
        ++seed;
        std::vector<T> input = input_of<T>(w.rank, count, seed);
        std::vector<T> output(count, T(7));
        if (in_place) {
          output = input;
        }
        const SharedMemoryResult result =
            shared_memory_allreduce(w.context(), in_place ? output.data() : input.data(), output.data(),
                                    count, {element_type<T>(), reduce_op(op)});
        EXPECT_TRUE(result.ok);
        EXPECT_EQ(result.chunks, (count * sizeof(T) + kStageBytes - 1) / kStageBytes);
        const std::vector<T> expected = folded<T>(op, count, seed);
        EXPECT_EQ(std::memcmp(output.data(), expected.data(), count * sizeof(T)), 0)
            << "rank " << w.rank << " op " << static_cast<int>(op) << " count " << count << " in place "
            << in_place;
      }
    }
  }
}

using reference::Op;

TEST(SharedMemoryAllreduce, IntegersFoldedInRankOrder) {
  const auto all = {Op::Sum, Op::Prod, Op::Min,  Op::Max, Op::Land,
                    Op::Lor, Op::Lxor, Op::Band, Op::Bor, Op::Bxor};
  check_allreduce<std::int8_t>(all);
  check_allreduce<std::uint16_t>(all);
  check_allreduce<std::int32_t>(all);
  check_allreduce<std::uint64_t>(all);
}

TEST(SharedMemoryAllreduce, FloatsFoldedInRankOrderBitwise) {
  check_allreduce<float>({Op::Sum, Op::Prod, Op::Min, Op::Max});
  check_allreduce<double>({Op::Sum, Op::Prod, Op::Min, Op::Max});
}

TEST(SharedMemoryAllreduce, EqualsMpiOnExactData) {
  World& w = world();
  const std::size_t count = kStageBytes / sizeof(double) + 11;
  std::vector<double> input(count);
  for (std::size_t i = 0; i < count; ++i) {
    input[i] = static_cast<double>(mix(i ^ (static_cast<std::uint64_t>(w.rank) << 40)) % 4);
  }
  std::vector<double> ours(count);
  std::vector<double> mpi(count);
  EXPECT_TRUE(shared_memory_allreduce(w.context(), input.data(), ours.data(), count,
                                      {ElementType::Float64, ReduceOp::Sum})
                  .ok);
  MPI_Allreduce(input.data(), mpi.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(std::memcmp(ours.data(), mpi.data(), count * sizeof(double)), 0);
}

TEST(HostReduction, SixteenBitFloatsRoundToNearestEven) {
  EXPECT_EQ(half_from_double(1.0), 0x3c00);
  EXPECT_EQ(half_from_double(65504.0), 0x7bff);
  EXPECT_EQ(half_from_double(65519.0), 0x7bff);
  EXPECT_EQ(half_from_double(65520.0), 0x7c00); // the tie rounds to even: infinity
  EXPECT_EQ(half_from_double(-0x1p-24), 0x8001);
  EXPECT_EQ(half_from_double(0x1p-25), 0x0000);           // a tie with zero, which is even
  EXPECT_EQ(half_from_double(1.0 + 0x1p-11), 0x3c00);     // tie: to even
  EXPECT_EQ(half_from_double(1.0 + 3 * 0x1p-11), 0x3c02); // tie: to even, upwards
  EXPECT_EQ(half_from_double(0x1p-14 - 0x1p-24), 0x03ff); // the largest subnormal
  EXPECT_FLOAT_EQ(float_from_half(0x3555), 0.333251953125f);
  EXPECT_EQ(float_from_half(0x0001), 0x1p-24f);
  EXPECT_EQ(bfloat16_from_double(1.0), 0x3f80);
  EXPECT_EQ(bfloat16_from_double(1.0 + 0x1p-8), 0x3f80);
  EXPECT_EQ(bfloat16_from_double(1.0 + 3 * 0x1p-8), 0x3f82);
  EXPECT_EQ(bfloat16_from_double(-2.0), 0xc000);
  EXPECT_EQ(float_from_bfloat16(0x4049), 3.140625f);
  for (std::uint32_t bits = 0; bits < 0x7c00; ++bits) { // every finite half survives the round trip
    EXPECT_EQ(half_from_double(float_from_half(static_cast<std::uint16_t>(bits))), bits);
  }
}

TEST(SharedMemoryAllreduce, SixteenBitFloats) {
  World& w = world();
  const std::size_t count = kStageBytes / 2 + 9;
  for (const ElementType type : {ElementType::Float16, ElementType::BFloat16}) {
    const auto narrow = type == ElementType::Float16 ? half_from_double : bfloat16_from_double;
    const auto widen = type == ElementType::Float16 ? float_from_half : float_from_bfloat16;
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max}) {
      auto value = [](int rank, std::size_t i) { return static_cast<double>(mix(i * 31 + rank) % 4) + 0.5; };
      std::vector<std::uint16_t> input(count);
      std::vector<std::uint16_t> output(count);
      for (std::size_t i = 0; i < count; ++i) {
        input[i] = narrow(value(w.rank, i));
      }
      EXPECT_TRUE(shared_memory_allreduce(w.context(), input.data(), output.data(), count, {type, op}).ok);
      for (std::size_t i = 0; i < count; ++i) {
        // Rounded after every step, as the GPU's 16-bit instructions round (products of up to
        // eight values of 3 significant bits exceed bfloat16's 8).
        std::uint16_t expected = narrow(value(0, i));
        for (int rank = 1; rank < w.size; ++rank) {
          const double a = widen(expected);
          const double b = value(rank, i);
          expected = narrow(op == ReduceOp::Sum    ? a + b
                            : op == ReduceOp::Prod ? a * b
                            : op == ReduceOp::Min  ? std::min(a, b)
                                                   : std::max(a, b));
        }
        ASSERT_EQ(output[i], expected)
            << "type " << static_cast<int>(type) << " op " << static_cast<int>(op) << " element " << i;
      }
    }
  }
}

TEST(SharedMemoryAllgather, ContiguousBlocksInPlaceOrNot) {
  World& w = world();
  for (const std::size_t block : {std::size_t{1}, std::size_t{13}, kStageBytes + 5}) {
    for (const bool in_place : {false, true}) {
      auto byte_of = [](int rank, std::size_t i) {
        return static_cast<unsigned char>(mix(i ^ (rank * 977ULL)));
      };
      std::vector<unsigned char> input(block);
      std::vector<unsigned char> output(block * w.size, 0xa5);
      for (std::size_t i = 0; i < block; ++i) {
        input[i] = byte_of(w.rank, i);
        if (in_place) {
          output[block * w.rank + i] = input[i];
        }
      }
      const void* source = in_place ? output.data() + block * w.rank : input.data();
      const SharedMemoryResult result =
          shared_memory_allgather(w.context(), {source, block}, output.data(), block, {});
      EXPECT_TRUE(result.ok);
      EXPECT_FALSE(result.declined);
      for (int rank = 0; rank < w.size; ++rank) {
        for (std::size_t i = 0; i < block; ++i) {
          ASSERT_EQ(output[block * rank + i], byte_of(rank, i)) << "block " << block << " rank " << rank;
        }
      }
    }
  }
}

TEST(SharedMemoryAllgather, RunsOfNonContiguousDatatypes) {
  World& w = world();
  // Each rank sends 3 ints taken every other int, and receives each block as 3 ints every third.
  const std::vector<ByteRun> send_runs{{0, 4}, {8, 4}, {16, 4}};
  const std::vector<ByteRun> receive_runs{{0, 4}, {12, 4}, {24, 4}};
  const std::uint64_t extent = 36;
  std::vector<std::int32_t> input{w.rank * 10, -1, w.rank * 10 + 1, -1, w.rank * 10 + 2};
  std::vector<std::int32_t> output(9 * w.size, -7);
  const SharedMemoryResult result = shared_memory_allgather(w.context(), {input.data(), 12, send_runs},
                                                            output.data(), extent, receive_runs);
  EXPECT_TRUE(result.ok);
  for (int rank = 0; rank < w.size; ++rank) {
    for (int i = 0; i < 9; ++i) {
      const std::int32_t expected = i % 3 == 0 ? rank * 10 + i / 3 : -7; // the gaps stay as they were
      EXPECT_EQ(output[9 * rank + i], expected) << "rank " << rank << " int " << i;
    }
  }
}

TEST(SharedMemoryAllgather, UndescribedOnOneRankDeclinesEverywhere) {
  World& w = world();
  std::vector<unsigned char> input(64, 1);
  std::vector<unsigned char> output(64 * w.size, 0);
  const SharedMemoryResult result =
      shared_memory_allgather(w.context(), {input.data(), 64}, output.data(), 64, {}, w.rank != w.size - 1);
  EXPECT_TRUE(result.declined);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(std::count(output.begin(), output.end(), 0), static_cast<long>(output.size())); // nothing moved
}

TEST(SharedMemoryAllgather, BlocksOfDifferentSizesFailEverywhere) {
  World& w = world();
  const std::size_t block = w.rank == 1 ? 48 : 64;
  std::vector<unsigned char> input(block, 1);
  std::vector<unsigned char> output(64 * w.size, 0);
  const SharedMemoryResult result =
      shared_memory_allgather(w.context(), {input.data(), block}, output.data(), 64, {});
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.declined);
}

unsigned char bcast_byte(int root, std::size_t i) {
  return static_cast<unsigned char>(mix(i ^ (root * 7919ULL)));
}

TEST(SharedMemoryBcast, EveryRootEveryCountAcrossChunks) {
  World& w = world();
  for (int root = 0; root < w.size; ++root) {
    for (const std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{13}, kStageBytes,
                                    kStageBytes + 1, 2 * kStageBytes + 7}) {
      std::vector<unsigned char> buffer(bytes + 1, 0xa5); // a byte past the message
      for (std::size_t i = 0; i < bytes && w.rank == root; ++i) {
        buffer[i] = bcast_byte(root, i);
      }
      const SharedMemoryResult result = shared_memory_bcast(w.context(), {buffer.data(), bytes}, root);
      EXPECT_TRUE(result.ok);
      EXPECT_FALSE(result.declined);
      EXPECT_EQ(result.chunks, (bytes + kStageBytes - 1) / kStageBytes);
      EXPECT_EQ(result.bytes_host, bytes); // the root's copy in, or this rank's copy out
      std::size_t wrong = 0; // counted, not asserted: every rank goes on to the next call in step
      for (std::size_t i = 0; i < bytes; ++i) {
        wrong += buffer[i] != bcast_byte(root, i) ? 1 : 0;
      }
      EXPECT_EQ(wrong, 0U) << "root " << root << " bytes " << bytes;
      EXPECT_EQ(buffer[bytes], 0xa5) << "root " << root << " bytes " << bytes; // nothing past the message
    }
  }
}

TEST(SharedMemoryBcast, RunsOfNonContiguousDatatypes) {
  World& w = world();
  // The root sends 3 contiguous ints; the others receive them every third int.
  const int root = w.size - 1;
  const std::vector<ByteRun> receive_runs{{0, 4}, {12, 4}, {24, 4}};
  std::vector<std::int32_t> buffer(9, -7);
  if (w.rank == root) {
    buffer = {40, 41, 42, -7, -7, -7, -7, -7, -7};
  }
  const SharedMemoryResult result = shared_memory_bcast(
      w.context(), {buffer.data(), 12, w.rank == root ? std::span<const ByteRun>{} : receive_runs}, root);
  EXPECT_TRUE(result.ok);
  const std::vector<std::int32_t> expected =
      w.rank == root ? std::vector<std::int32_t>{40, 41, 42, -7, -7, -7, -7, -7, -7}
                     : std::vector<std::int32_t>{40, -7, -7, 41, -7, -7, 42, -7, -7}; // the gaps stay
  EXPECT_EQ(buffer, expected) << "rank " << w.rank;
}

TEST(SharedMemoryBcast, UndescribedOnOneRankDeclinesEverywhere) {
  World& w = world();
  std::vector<unsigned char> buffer(64, w.rank == 0 ? 1 : 0);
  const SharedMemoryResult result =
      shared_memory_bcast(w.context(), {buffer.data(), 64}, 0, w.rank != w.size - 1);
  EXPECT_TRUE(result.declined);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(std::count(buffer.begin(), buffer.end(), w.rank == 0 ? 1 : 0), 64); // nothing moved
}

TEST(SharedMemoryBcast, MessagesOfDifferentSizesFailEverywhere) {
  World& w = world();
  const std::size_t bytes = w.rank == w.size - 1 ? 48 : 64;
  std::vector<unsigned char> buffer(64, 0);
  const SharedMemoryResult result = shared_memory_bcast(w.context(), {buffer.data(), bytes}, 0);
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.declined);
}

TEST(SharedMemoryReduceScatter, UnevenCountsFoldedInRankOrder) {
  World& w = world();
  std::vector<int> counts(w.size);
  for (int rank = 0; rank < w.size; ++rank) {
    counts[rank] = rank == 1 ? 0 : rank == 2 ? static_cast<int>(kStageBytes / sizeof(float)) + 1 : 3 + rank;
  }
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  const std::size_t first = std::accumulate(counts.begin(), counts.begin() + w.rank, std::size_t{0});
  for (const Op op : {Op::Sum, Op::Prod, Op::Max}) {
    const std::uint64_t seed = 99 + static_cast<std::uint64_t>(op);
    std::vector<float> input = input_of<float>(w.rank, total, seed);
    std::vector<float> output(counts[w.rank] + 1, -3.0f);
    const SharedMemoryResult result = shared_memory_reduce_scatter(
        w.context(), input.data(), output.data(), counts, {ElementType::Float32, reduce_op(op)});
    EXPECT_TRUE(result.ok);
    const std::vector<float> expected = folded<float>(op, total, seed);
    EXPECT_EQ(std::memcmp(output.data(), expected.data() + first, counts[w.rank] * sizeof(float)), 0)
        << "rank " << w.rank << " op " << static_cast<int>(op);
    EXPECT_EQ(output.back(), -3.0f); // nothing past the block
  }
}

TEST(SharedMemoryCollectives, AFailedCopyFailsEveryRankAndTheNextCallRuns) {
  World& w = world();
  const std::size_t count = 3 * kStageBytes / sizeof(std::int32_t);
  std::vector<std::int32_t> input(count, w.rank + 1);
  std::vector<std::int32_t> output(count, 0);
  w.failing_rank = w.size - 1;
  EXPECT_FALSE(shared_memory_allreduce(w.context(), input.data(), output.data(), count,
                                       {ElementType::Int32, ReduceOp::Sum})
                   .ok);
  EXPECT_FALSE(shared_memory_reduce_scatter(w.context(), input.data(), output.data(),
                                            std::vector<int>(w.size, 5), {ElementType::Int32, ReduceOp::Sum})
                   .ok);
  // The root's copy in fails, or a receiving rank's copy out (in the third chunk: the first two ran).
  EXPECT_FALSE(
      shared_memory_bcast(w.context(), {output.data(), count * sizeof(std::int32_t)}, w.size - 1).ok);
  w.failing_rank = -1;
  std::vector<std::int32_t> copy_fails_late(count, 0);
  const StageContext working = w.context();
  int copies = 0;
  const StageContext third_copy_fails{
      working.stages, working.barrier, [&](void* destination, const void* source, std::size_t bytes) {
        return !(w.rank == w.size - 1 && ++copies == 3) && working.copy(destination, source, bytes);
      }};
  EXPECT_FALSE(shared_memory_bcast(
                   third_copy_fails,
                   {w.rank == 0 ? input.data() : copy_fails_late.data(), count * sizeof(std::int32_t)}, 0)
                   .ok);
  EXPECT_TRUE(shared_memory_allreduce(w.context(), input.data(), output.data(), count,
                                      {ElementType::Int32, ReduceOp::Sum})
                  .ok);
  EXPECT_EQ(output[count - 1], w.size * (w.size + 1) / 2);
  std::vector<std::int32_t> received(count, 0);
  EXPECT_TRUE(
      shared_memory_bcast(w.context(),
                          {w.rank == 0 ? input.data() : received.data(), count * sizeof(std::int32_t)}, 0)
          .ok);
  EXPECT_EQ(w.rank == 0 ? input[count - 1] : received[count - 1], 1);
}

} // namespace
} // namespace commlens::runtime
