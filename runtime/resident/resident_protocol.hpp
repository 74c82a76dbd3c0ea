#pragma once
// What the host and the resident kernel (resident_kernel.cuh) exchange: the calls a rank's host
// thread hands to its kernel through pinned host memory, and the layout of every rank's region of
// device memory the ranks share. Plain data, readable by nvcc and the C++ compiler alike; pure C++
// so that the CPU tests check the plans (resident_plan.hpp) against the collectives' results.
//
// The protocol, for ranks sharing one GPU under MPS (docs/design.md, "The resident kernel"):
// - each rank owns a region: a line of flag words, then two halves of `slot_bytes` for its
//   contribution; call number n uses flag n % 2 and half n % 2;
// - a call: the rank's kernel copies its contribution into its half, then publishes
//   flag = n << kDeclineBits | decline; it waits until every rank's flag has reached n; if no rank
//   declined, it runs its steps (copies and reductions out of the ranks' halves into this rank's
//   buffers) and reports done = n to the host;
// - a rank publishes n + 1 only after its steps of n, so a half and a flag are rewritten (at n + 2)
//   only after every rank has finished reading them: one wait per call, no acknowledgements.
// The kernel is kBlocks blocks: block 0 takes the calls from the host and, for a call with work
// for several (Call::blocks), hands it to the others through its region's line (`go`); each copies
// and reduces its share and counts itself in (`shared`, `finished`), so that block 0 publishes the
// flag and reports done only when all have. A small call stays on block 0: handing it over costs
// more than the work.
#include "device/reduction_types.hpp"

#include <cstdint>
#include <type_traits>

namespace commlens::runtime::resident {

inline constexpr int kMaxRanks = 8;                  // device/device_kernels.hpp's kMaxRanks
inline constexpr int kMaxSteps = kMaxRanks;          // a rank's output receives at most one block per rank
inline constexpr int kBlocks = 4;                    // blocks of the kernel: SMs a rank holds while it runs
inline constexpr int kDeclineBits = 4;               // the low bits of a flag: the rank's decline code
inline constexpr std::uint64_t kLineBytes = 256;     // a region's line of words, before its halves
inline constexpr std::uint64_t kHalfAlignment = 256; // halves start and end at multiples of this

// The words of a region's line: flags[2] (the peers read them), then the rank's own blocks'.
enum LineWord : int {
  kFlagEven = 0,
  kFlagOdd = 1,
  kGo = 2,       // block 0 to the others: epoch << kGoEpochShift | call number (kGoLeave: leave)
  kShared = 3,   // blocks that have copied their share of the contribution, this call
  kFinished = 4, // blocks that have run their share of the steps, this call
  kGoBlocks = 5, // the handed call's blocks, written before `go`: the others do not read the call,
                 // which the host may already be rewriting once the call's blocks are done
};
inline constexpr int kGoEpochShift = 40;
inline constexpr std::uint64_t kGoLeave = (std::uint64_t{1} << kGoEpochShift) - 1;

// The kernel is compiled once per family of element types (resident_kernel_family.cu.in): one
// kernel that reduces all of them takes ptxas many minutes (it grows faster than the types it
// dispatches over), one per family under a minute each. A call with a reduce step names its
// family; a kernel of another family leaves without taking the call, and the host launches the
// call's family (as it does after the linger). Copy-only calls run on any family's kernel.
enum class KernelFamily : std::uint32_t { Integers8, Integers16, WideIntegers, Floats, Any };
inline constexpr std::uint32_t kKernelFamilies = 4; // the compiled ones: every value before Any
template <typename T>
inline constexpr KernelFamily kElementFamily = !std::is_integral_v<T> ? KernelFamily::Floats
                                               : sizeof(T) == 1       ? KernelFamily::Integers8
                                               : sizeof(T) == 2       ? KernelFamily::Integers16
                                                                      : KernelFamily::WideIntegers;

enum class StepKind : std::uint32_t {
  Copy,  // bytes from `source`'s half at source_offset to destination
  Reduce // `elements` at source_offset of every rank's half, combined in rank order, to destination
};

struct Step {
  StepKind kind = StepKind::Copy;
  std::int32_t source = 0;
  std::uint64_t source_offset = 0;
  void* destination = nullptr;
  std::uint64_t count = 0; // Copy: bytes; Reduce: elements
};

// One call as the host writes it for its kernel: only what changes from call to call, since the
// kernel reads it across PCIe (in 16-byte loads, all at once).
struct alignas(16) Call {
  std::uint64_t number = 0;  // the communicator's resident call number, from 1 (also the flags' value)
  std::uint32_t decline = 0; // this rank's reason not to run the call (0: none)
  std::uint32_t step_count = 0;
  std::uint32_t leave = 0;  // the channel closes: the kernel leaves after reporting done
  std::uint32_t blocks = 1; // blocks that share the call's work, 1 to kBlocks
  Reduction reduction{};
  std::uint32_t element_bytes = 1;         // the reduction's element type
  KernelFamily family = KernelFamily::Any; // the kernel that can run the call's steps
  const void* contribution = nullptr;      // copied into this rank's half first (null: none)
  std::uint64_t contribution_bytes = 0;
  Step steps[kMaxSteps] = {};
};

// When block 0 passed the points of a call (the GPU's global timer, ns): the wait for the other
// ranks goes into the call's runtime_ops row as its agreement, all of them into the run's summary
// of the resident calls. Written with the outcome, before done.
struct KernelTimes {
  std::uint64_t taken;   // block 0 had the call
  std::uint64_t flagged; // this rank's contribution was in its half and its flag published
  std::uint64_t arrived; // every rank's flag had reached the call
  std::uint64_t done;    // every block had run its steps
};

// Pinned host memory the host and its kernel share. The host writes `call` and then `posted`; the
// kernel writes the rest: the call's outcome and then `done` when a call is finished, `exited` (its
// launch epoch) when it leaves after lingering idle. Host-written and kernel-written words sit on
// different cache lines.
struct alignas(128) Mailbox {
  alignas(128) volatile std::uint64_t posted;
  alignas(128) volatile std::uint64_t done;
  volatile std::uint64_t exited;
  volatile std::int32_t declined_rank; // of the call `done` names: the first rank that declined, or -1
  volatile std::uint32_t decline;      // its decline code
  volatile KernelTimes times;
  alignas(128) Call call;
};

// What stays the same for a channel's every call: the kernel's launch arguments.
struct KernelArguments {
  Mailbox* mailbox = nullptr;    // its device address
  char* regions[kMaxRanks] = {}; // every rank's region as mapped in this process
  std::int32_t ranks = 0;
  std::int32_t me = 0;
  std::uint64_t slot_bytes = 0; // one half
  std::uint64_t epoch = 0;      // this launch's number, written into mailbox->exited as it leaves
  std::uint64_t linger_ns = 0;  // idle time after which it leaves
};

} // namespace commlens::runtime::resident
