// The resident kernel's plans (runtime/resident/resident_plan.hpp), run on host memory the way the
// kernel runs them (each rank's contribution into its half, then every rank's steps out of the
// halves), against MPI's definition of each collective computed here independently: every rank
// count, root, in-place choice, odd block size and reduce_scatter counts with zeros.
#include "resident/resident_plan.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

namespace commlens::runtime::resident {
namespace {

using movement::CallGeometry;
using tuning::Collective;
using Bytes = std::vector<unsigned char>;

// Runs the ranks' plans: halves[r] receives rank r's contribution, then each rank's steps run.
// Reductions are int32 sums (the plans decide offsets and counts; the operators are the kernels').
void run_plans(const std::vector<Plan>& plans, std::uint64_t half_bytes) {
  const int ranks = static_cast<int>(plans.size());
  std::vector<Bytes> halves(static_cast<std::size_t>(ranks), Bytes(half_bytes + 1, 0xEE));
  for (int rank = 0; rank < ranks; ++rank) {
    const Plan& plan = plans[static_cast<std::size_t>(rank)];
    ASSERT_LE(plan.contribution_bytes, half_bytes) << "rank " << rank;
    if (plan.contribution_bytes > 0) {
      std::memcpy(halves[static_cast<std::size_t>(rank)].data(), plan.contribution, plan.contribution_bytes);
    }
  }
  for (const Plan& plan : plans) {
    ASSERT_LE(plan.step_count, static_cast<std::uint32_t>(kMaxSteps));
    for (std::uint32_t index = 0; index < plan.step_count; ++index) {
      const Step& step = plan.steps[index];
      if (step.kind == StepKind::Copy) {
        ASSERT_LE(step.source_offset + step.count, half_bytes);
        std::memcpy(step.destination,
                    halves[static_cast<std::size_t>(step.source)].data() + step.source_offset, step.count);
        continue;
      }
      ASSERT_LE(step.source_offset + step.count * sizeof(std::int32_t), half_bytes);
      for (std::uint64_t element = 0; element < step.count; ++element) {
        std::int32_t sum = 0;
        for (const Bytes& half : halves) {
          std::int32_t value = 0;
          std::memcpy(&value, half.data() + step.source_offset + element * sizeof(value), sizeof(value));
          sum += value;
        }
        std::memcpy(static_cast<char*>(step.destination) + element * sizeof(sum), &sum, sizeof(sum));
      }
    }
  }
}

unsigned char pattern(int rank, std::uint64_t index) {
  return static_cast<unsigned char>(rank * 37 + index * 11 + 1);
}

Bytes filled(int rank, std::uint64_t bytes) {
  Bytes buffer(bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) {
    buffer[i] = pattern(rank, i);
  }
  return buffer;
}

// Allgather, gather, scatter and alltoall: rank r's input holds pattern(r, i); the outputs start
// as 0xAB, so a block written where it should not be, or not written, shows.
void check_copies(Collective collective, int ranks, int root, bool in_place, std::uint64_t block) {
  const CallGeometry call{
      .collective = collective, .ranks = ranks, .root = root, .in_place = in_place, .block_bytes = block};
  const std::uint64_t all = block * static_cast<std::uint64_t>(ranks);
  const bool input_whole = collective == Collective::Scatter || collective == Collective::Alltoall;
  std::vector<Bytes> inputs;
  std::vector<Bytes> outputs;
  for (int rank = 0; rank < ranks; ++rank) {
    inputs.push_back(filled(rank, input_whole ? all : block));
    const bool gathers = collective == Collective::Allgather || collective == Collective::Gather;
    outputs.emplace_back(gathers || collective == Collective::Alltoall ? all : block, 0xAB);
  }
  std::vector<Plan> plans;
  for (int rank = 0; rank < ranks; ++rank) {
    auto& output = outputs[static_cast<std::size_t>(rank)];
    const void* input = inputs[static_cast<std::size_t>(rank)].data();
    if (in_place &&
        (collective == Collective::Allgather || (collective == Collective::Gather && rank == root))) {
      // MPI_IN_PLACE: the rank's block is already at its index in the output (block_plan.hpp).
      std::memcpy(output.data() + block * static_cast<std::uint64_t>(rank), input, block);
      input = output.data() + block * static_cast<std::uint64_t>(rank);
    }
    plans.push_back(plan_movement(call, rank, input, output.data()));
  }
  run_plans(plans, movement_half_bytes(call));
  for (int d = 0; d < ranks; ++d) {
    const Bytes& output = outputs[static_cast<std::size_t>(d)];
    for (std::uint64_t i = 0; i < output.size(); ++i) {
      const auto index_block = static_cast<int>(i / block);
      const std::uint64_t within = i % block;
      unsigned char expected = 0xAB;
      switch (collective) {
      case Collective::Allgather:
        expected = pattern(index_block, within);
        break;
      case Collective::Gather:
        expected = d == root ? pattern(index_block, within) : 0xAB;
        break;
      case Collective::Scatter:
        expected = d == root && in_place ? 0xAB : pattern(root, static_cast<std::uint64_t>(d) * block + i);
        break;
      default: // alltoall: block s of d's output is block d of s's input
        expected = pattern(index_block, static_cast<std::uint64_t>(d) * block + within);
        break;
      }
      ASSERT_EQ(output[i], expected) << "collective " << static_cast<int>(collective) << ", " << ranks
                                     << " ranks, root " << root << ", in place " << in_place << ", rank " << d
                                     << ", byte " << i;
    }
  }
}

TEST(ResidentPlan, DataMovementCollectivesDeliverEveryBlockAsMpiDefinesThem) {
  for (const Collective collective :
       {Collective::Allgather, Collective::Gather, Collective::Scatter, Collective::Alltoall}) {
    for (int ranks = 1; ranks <= kMaxRanks; ++ranks) {
      for (int root = 0; root < ranks; root += 2) {
        for (const bool in_place : {false, true}) {
          if (in_place && collective == Collective::Alltoall) {
            continue;
          }
          for (const std::uint64_t block : {std::uint64_t{1}, std::uint64_t{13}, std::uint64_t{4096}}) {
            check_copies(collective, ranks, root, in_place, block);
          }
        }
      }
    }
  }
}

std::int32_t element_of(int rank, std::uint64_t index) {
  return static_cast<std::int32_t>(rank * 1000 + static_cast<std::int64_t>(index) * 3 - 7);
}

std::vector<std::int32_t> int_input(int rank, std::uint64_t elements) {
  std::vector<std::int32_t> values(elements);
  for (std::uint64_t i = 0; i < elements; ++i) {
    values[i] = element_of(rank, i);
  }
  return values;
}

std::int32_t sum_of(int ranks, std::uint64_t index) {
  std::int32_t sum = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    sum += element_of(rank, index);
  }
  return sum;
}

TEST(ResidentPlan, ReduceScatterGivesEachRankItsSliceSummed) {
  for (int ranks = 1; ranks <= kMaxRanks; ++ranks) {
    std::vector<int> counts(static_cast<std::size_t>(ranks));
    for (int rank = 0; rank < ranks; ++rank) {
      counts[static_cast<std::size_t>(rank)] = rank % 3 == 1 ? 0 : rank * 5 + 3; // some ranks receive nothing
    }
    for (const bool block : {true, false}) {
      const std::uint64_t block_elements = 9;
      const CallGeometry call{.collective =
                                  block ? Collective::ReduceScatterBlock : Collective::ReduceScatter,
                              .ranks = ranks,
                              .block_bytes = block_elements * sizeof(std::int32_t),
                              .counts = block ? std::span<const int>{} : std::span<const int>(counts),
                              .element_bytes = sizeof(std::int32_t)};
      const std::uint64_t total =
          block ? block_elements * static_cast<std::uint64_t>(ranks)
                : static_cast<std::uint64_t>(std::accumulate(counts.begin(), counts.end(), 0));
      std::vector<std::vector<std::int32_t>> inputs;
      std::vector<std::vector<std::int32_t>> outputs;
      std::vector<Plan> plans;
      for (int rank = 0; rank < ranks; ++rank) {
        inputs.push_back(int_input(rank, total));
        const std::uint64_t mine = block ? block_elements : static_cast<std::uint64_t>(counts[rank]);
        outputs.emplace_back(mine, -1);
        plans.push_back(plan_movement(call, rank, inputs.back().data(), outputs.back().data()));
      }
      run_plans(plans, movement_half_bytes(call));
      std::uint64_t first = 0;
      for (int rank = 0; rank < ranks; ++rank) {
        const auto& output = outputs[static_cast<std::size_t>(rank)];
        for (std::uint64_t i = 0; i < output.size(); ++i) {
          ASSERT_EQ(output[i], sum_of(ranks, first + i))
              << ranks << " ranks, rank " << rank << ", element " << i;
        }
        first += output.size();
      }
    }
  }
}

TEST(ResidentPlan, AllreduceAndReduceSumEveryRanksInputWhereMpiSays) {
  for (int ranks = 1; ranks <= kMaxRanks; ++ranks) {
    for (int root = -1; root < ranks; ++root) { // -1: allreduce
      for (const bool in_place : {false, true}) {
        const std::uint64_t elements = 37;
        std::vector<std::vector<std::int32_t>> inputs;
        std::vector<std::vector<std::int32_t>> outputs;
        std::vector<Plan> plans;
        for (int rank = 0; rank < ranks; ++rank) {
          inputs.push_back(int_input(rank, elements));
          outputs.emplace_back(elements, -1);
          const bool receives = root < 0 || rank == root;
          const void* input = inputs.back().data();
          if (in_place && receives) {
            outputs.back() = inputs.back();
            input = outputs.back().data();
          }
          plans.push_back(root < 0 ? plan_allreduce(input, outputs.back().data(), elements,
                                                    sizeof(std::int32_t), ranks, rank)
                                   : plan_reduce(input, outputs.back().data(), elements, sizeof(std::int32_t),
                                                 ranks, rank, root));
        }
        run_plans(plans, elements * sizeof(std::int32_t));
        for (int rank = 0; rank < ranks; ++rank) {
          const bool receives = root < 0 || rank == root;
          for (std::uint64_t i = 0; i < elements; ++i) {
            const std::int32_t untouched = in_place && receives ? element_of(rank, i) : -1;
            ASSERT_EQ(outputs[static_cast<std::size_t>(rank)][i], receives ? sum_of(ranks, i) : untouched)
                << ranks << " ranks, root " << root << ", in place " << in_place << ", rank " << rank;
          }
        }
      }
    }
  }
}

TEST(ResidentPlan, BcastCopiesTheRootsBufferIntoEveryOther) {
  for (int ranks = 1; ranks <= kMaxRanks; ++ranks) {
    for (int root = 0; root < ranks; ++root) {
      const std::uint64_t bytes = 1021;
      std::vector<Bytes> buffers;
      for (int rank = 0; rank < ranks; ++rank) {
        buffers.push_back(rank == root ? filled(root, bytes) : Bytes(bytes, 0xAB));
      }
      std::vector<Plan> plans;
      for (int rank = 0; rank < ranks; ++rank) {
        plans.push_back(plan_bcast(buffers[static_cast<std::size_t>(rank)].data(), bytes, rank, root));
      }
      run_plans(plans, bytes);
      for (int rank = 0; rank < ranks; ++rank) {
        EXPECT_EQ(buffers[static_cast<std::size_t>(rank)], filled(root, bytes))
            << ranks << " ranks, root " << root;
      }
    }
  }
}

TEST(ResidentPlan, PeerBytesCountWhatARankReadsFromOtherRanksHalves) {
  const CallGeometry allgather{.collective = Collective::Allgather, .ranks = 4, .block_bytes = 100};
  Bytes input(100), output(400);
  EXPECT_EQ(plan_movement(allgather, 1, input.data(), output.data()).peer_bytes, 300u);
  EXPECT_EQ(plan_bcast(output.data(), 400, 2, 0).peer_bytes, 400u);
  EXPECT_EQ(plan_bcast(output.data(), 400, 0, 0).peer_bytes, 0u);
  EXPECT_EQ(plan_allreduce(input.data(), output.data(), 25, 4, 4, 3).peer_bytes, 300u);
  EXPECT_EQ(plan_reduce(input.data(), output.data(), 25, 4, 4, 3, 0).peer_bytes, 0u);
}

TEST(ResidentPlan, SmallCallsStayOnOneBlockAndLargeOnesSpreadOverAll) {
  Bytes buffer(1 << 20);
  EXPECT_EQ(blocks_for(plan_bcast(buffer.data(), 8, 1, 0), 4, 1), 1u);
  EXPECT_EQ(blocks_for(plan_bcast(buffer.data(), kBytesPerBlock, 1, 0), 4, 1), 1u);
  EXPECT_EQ(blocks_for(plan_bcast(buffer.data(), kBytesPerBlock + 1, 1, 0), 4, 1), 2u);
  EXPECT_EQ(blocks_for(plan_bcast(buffer.data(), 1 << 20, 1, 0), 4, 1), static_cast<std::uint32_t>(kBlocks));
  // A reduction loads every rank's slice and stores its own: 16 KiB of contribution at 2 ranks
  // moves 16 + 3 x 16 KiB.
  const std::uint64_t elements = 16 * 1024 / sizeof(std::int32_t);
  EXPECT_EQ(blocks_for(plan_allreduce(buffer.data(), buffer.data(), elements, 4, 2, 0), 2, 4), 1u);
  EXPECT_EQ(blocks_for(plan_allreduce(buffer.data(), buffer.data(), 2 * elements, 4, 2, 0), 2, 4), 2u);
  // A rank without contribution or steps still runs the call (its flag): one block.
  EXPECT_EQ(blocks_for(Plan{}, 4, 1), 1u);
}

TEST(ResidentPlan, EveryElementTypeHasOneCompiledKernelFamilyBySizeAndKind) {
  const std::pair<ElementType, KernelFamily> expected[] = {
      {ElementType::Int8, KernelFamily::Integers8},      {ElementType::UInt8, KernelFamily::Integers8},
      {ElementType::Bool, KernelFamily::Integers8},      {ElementType::Int16, KernelFamily::Integers16},
      {ElementType::UInt16, KernelFamily::Integers16},   {ElementType::Int32, KernelFamily::WideIntegers},
      {ElementType::UInt32, KernelFamily::WideIntegers}, {ElementType::Int64, KernelFamily::WideIntegers},
      {ElementType::UInt64, KernelFamily::WideIntegers}, {ElementType::Float32, KernelFamily::Floats},
      {ElementType::Float64, KernelFamily::Floats},      {ElementType::Float16, KernelFamily::Floats},
      {ElementType::BFloat16, KernelFamily::Floats}};
  for (const auto& [type, family] : expected) {
    EXPECT_EQ(kernel_family(type), family) << "element type " << static_cast<int>(type);
    EXPECT_LT(static_cast<std::uint32_t>(kernel_family(type)), kKernelFamilies);
  }
  EXPECT_EQ(kernel_family(static_cast<ElementType>(200)), KernelFamily::Any);
}

TEST(ResidentPlan, OnlyPlansThatReduceNeedTheirElementTypesFamily) {
  Bytes input(400), output(400);
  const Reduction int16_sum{ElementType::Int16, ReduceOp::Sum};
  // Allreduce: every rank reduces; reduce: the root only, the others copy nothing and reduce nothing.
  EXPECT_EQ(family_for(plan_allreduce(input.data(), output.data(), 100, 2, 4, 1), int16_sum),
            KernelFamily::Integers16);
  EXPECT_EQ(family_for(plan_reduce(input.data(), output.data(), 100, 2, 4, 0, 0), int16_sum),
            KernelFamily::Integers16);
  EXPECT_EQ(family_for(plan_reduce(input.data(), output.data(), 100, 2, 4, 3, 0), int16_sum),
            KernelFamily::Any);
  const CallGeometry reduce_scatter{
      .collective = Collective::ReduceScatterBlock, .ranks = 4, .block_bytes = 64, .element_bytes = 8};
  EXPECT_EQ(family_for(plan_movement(reduce_scatter, 2, input.data(), output.data()),
                       {ElementType::Float64, ReduceOp::Max}),
            KernelFamily::Floats);
  const CallGeometry allgather{.collective = Collective::Allgather, .ranks = 4, .block_bytes = 100};
  EXPECT_EQ(family_for(plan_movement(allgather, 1, input.data(), output.data()), int16_sum),
            KernelFamily::Any);
  EXPECT_EQ(family_for(plan_bcast(output.data(), 400, 2, 0), int16_sum), KernelFamily::Any);
}

} // namespace
} // namespace commlens::runtime::resident
