#pragma once
// What each rank's resident kernel does in one call (resident_protocol.hpp): the contribution it
// copies into its half, and the steps that fill its outputs from the ranks' halves. Pure
// arithmetic on the call's arguments, so the CPU tests run every plan on host memory.
#include "device/block_plan.hpp"
#include "resident/resident_protocol.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime::resident {

struct Plan {
  const void* contribution = nullptr;
  std::uint64_t contribution_bytes = 0;
  Step steps[kMaxSteps] = {};
  std::uint32_t step_count = 0;
  std::uint64_t peer_bytes = 0; // what the steps read from other ranks' halves
};

// The largest contribution of any rank: what a half must hold for the call. Equal on every rank.
std::uint64_t movement_half_bytes(const movement::CallGeometry& call);

// Allgather, gather, scatter, alltoall, reduce_scatter(_block): input and output as block_plan.hpp
// means them (null where the rank has none).
Plan plan_movement(const movement::CallGeometry& call, int me, const void* input, void* output);
// Allreduce (every rank reduces every half into its output) and reduce (only the root does).
Plan plan_allreduce(const void* input, void* output, std::uint64_t elements, std::size_t element_bytes,
                    int ranks, int me);
Plan plan_reduce(const void* input, void* output, std::uint64_t elements, std::size_t element_bytes,
                 int ranks, int me, int root);
// Bcast: the root contributes its buffer, every other rank copies the root's half into its own.
Plan plan_bcast(void* buffer, std::uint64_t bytes, int me, int root);

// The family of kernels that can run the plan: that of the reduction's element type if a step
// reduces, else any.
KernelFamily kernel_family(ElementType type) noexcept;
KernelFamily family_for(const Plan& plan, Reduction reduction) noexcept;

// How many of the kernel's blocks share a call's work (1 to kBlocks): one per kBytesPerBlock of
// bytes moved (the contribution, the copies, every rank's slice a reduction loads), since handing a
// call to more blocks costs more than a small call's work.
inline constexpr std::uint64_t kBytesPerBlock = 64 * 1024;
std::uint32_t blocks_for(const Plan& plan, int ranks, std::size_t element_bytes);

} // namespace commlens::runtime::resident
