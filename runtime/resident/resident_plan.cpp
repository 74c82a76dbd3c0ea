#include "resident/resident_plan.hpp"

#include "device/reduction_operators.hpp"

#include <algorithm>

namespace commlens::runtime::resident {

namespace {

Step reduce_step(std::uint64_t first_element, std::size_t element_bytes, void* output,
                 std::uint64_t elements) {
  return {StepKind::Reduce, 0, first_element * element_bytes, output, elements};
}

// The 16-bit floats as the element visitor names them: only their family matters here.
struct Float16Bits {};
struct BFloat16Bits {};

} // namespace

KernelFamily kernel_family(ElementType type) noexcept {
  return operators::visit_element_type<Float16Bits, BFloat16Bits>(
      type, [](auto element) { return kElementFamily<typename decltype(element)::type>; }, KernelFamily::Any);
}

KernelFamily family_for(const Plan& plan, Reduction reduction) noexcept {
  const bool reduces = std::any_of(plan.steps, plan.steps + plan.step_count,
                                   [](const Step& step) { return step.kind == StepKind::Reduce; });
  return reduces ? kernel_family(reduction.type) : KernelFamily::Any;
}

std::uint64_t movement_half_bytes(const movement::CallGeometry& call) {
  std::uint64_t largest = 0;
  for (int rank = 0; rank < call.ranks; ++rank) {
    largest = std::max(largest, movement::input_bytes(call, rank));
  }
  return largest;
}

Plan plan_movement(const movement::CallGeometry& call, int me, const void* input, void* output) {
  Plan plan;
  plan.contribution_bytes = movement::input_bytes(call, me);
  plan.contribution = plan.contribution_bytes > 0 ? input : nullptr;
  if (!movement::has_output(call, me)) {
    return plan;
  }
  const auto others = static_cast<std::uint64_t>(call.ranks - 1);
  if (movement::reduces(call.collective)) {
    const movement::Slice slice = movement::reduction_slice(call, me);
    if (slice.elements > 0) {
      plan.steps[plan.step_count++] = reduce_step(slice.first, call.element_bytes, output, slice.elements);
      plan.peer_bytes = slice.elements * call.element_bytes * others;
    }
    return plan;
  }
  movement::BlockCopy copies[movement::kMaxPlanRanks];
  const int count = movement::copies_into(call, me, copies);
  for (int index = 0; index < count; ++index) {
    const movement::BlockCopy& copy = copies[index];
    plan.steps[plan.step_count++] = {StepKind::Copy, copy.source, copy.source_offset,
                                     static_cast<char*>(output) + copy.destination_offset, copy.bytes};
    plan.peer_bytes += copy.source != me ? copy.bytes : 0;
  }
  return plan;
}

Plan plan_allreduce(const void* input, void* output, std::uint64_t elements, std::size_t element_bytes,
                    int ranks, int me) {
  return plan_reduce(input, output, elements, element_bytes, ranks, me, me);
}

Plan plan_reduce(const void* input, void* output, std::uint64_t elements, std::size_t element_bytes,
                 int ranks, int me, int root) {
  Plan plan;
  plan.contribution = input;
  plan.contribution_bytes = elements * element_bytes;
  if (me == root) {
    plan.steps[plan.step_count++] = reduce_step(0, element_bytes, output, elements);
    plan.peer_bytes = plan.contribution_bytes * static_cast<std::uint64_t>(ranks - 1);
  }
  return plan;
}

Plan plan_bcast(void* buffer, std::uint64_t bytes, int me, int root) {
  Plan plan;
  if (me == root) {
    plan.contribution = buffer;
    plan.contribution_bytes = bytes;
  } else {
    plan.steps[plan.step_count++] = {StepKind::Copy, root, 0, buffer, bytes};
    plan.peer_bytes = bytes;
  }
  return plan;
}

std::uint32_t blocks_for(const Plan& plan, int ranks, std::size_t element_bytes) {
  std::uint64_t bytes = plan.contribution_bytes;
  for (std::uint32_t index = 0; index < plan.step_count; ++index) {
    const Step& step = plan.steps[index];
    bytes += step.kind == StepKind::Copy ? step.count
                                         : step.count * element_bytes * static_cast<std::uint64_t>(ranks + 1);
  }
  const std::uint64_t blocks = (bytes + kBytesPerBlock - 1) / kBytesPerBlock;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(blocks, 1, kBlocks));
}

} // namespace commlens::runtime::resident
