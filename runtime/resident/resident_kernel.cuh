#pragma once
// The resident kernel: one block per rank and communicator that stays on the GPU while calls keep
// coming, so that a small collective costs a flag write, the copies and a completion flag instead
// of a launch, a stream synchronisation and host barriers (resident_protocol.hpp). A template over
// the family of element types its reduce steps take: resident_kernel_family.cu.in instantiates it
// once per family, each in its own translation unit.
//
// Every load of memory another agent writes (the user's buffers, the peers' halves, the flags)
// bypasses the SM's L1 (ld.cg, or acquire loads): the block outlives the calls, and L1 is not
// coherent with writes made by other kernels or processes.
#include "resident/resident_kernel.hpp"

#include "device/reduction_operators.hpp"
#include "device/vector_pack.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace commlens::runtime::resident {

namespace {

constexpr int kThreads = 512;
constexpr int kCopyUnroll = 8;   // 16-byte loads in flight per thread in a copy
constexpr int kReduceUnroll = 2; // packs per thread and round in a reduction (times the ranks' loads)

__device__ std::uint64_t now_ns() {
  std::uint64_t time;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(time));
  return time;
}

// One element of T from memory others write, through L2.
template <typename T> __device__ T load_cg(const T* pointer) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  T value;
  if constexpr (sizeof(T) == 1) {
    const unsigned char raw = __ldcg(reinterpret_cast<const unsigned char*>(pointer));
    __builtin_memcpy(&value, &raw, 1);
  } else if constexpr (sizeof(T) == 2) {
    const unsigned short raw = __ldcg(reinterpret_cast<const unsigned short*>(pointer));
    __builtin_memcpy(&value, &raw, 2);
  } else if constexpr (sizeof(T) == 4) {
    const unsigned int raw = __ldcg(reinterpret_cast<const unsigned int*>(pointer));
    __builtin_memcpy(&value, &raw, 4);
  } else {
    const unsigned long long raw = __ldcg(reinterpret_cast<const unsigned long long*>(pointer));
    __builtin_memcpy(&value, &raw, 8);
  }
  return value;
}

__device__ bool aligned16(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

// The block copies `bytes`: 16-byte packs, kCopyUnroll loads in flight per thread, when both ends
// are 16-byte aligned; else byte by byte.
__device__ void copy_block(void* destination, const void* source, std::uint64_t bytes) {
  std::uint64_t packs = aligned16(destination) && aligned16(source) ? bytes / 16 : 0;
  const auto* from = static_cast<const uint4*>(source);
  auto* to = static_cast<uint4*>(destination);
  constexpr std::uint64_t kRound = std::uint64_t(kThreads) * kCopyUnroll;
  for (std::uint64_t base = 0; base < packs; base += kRound) {
    uint4 loaded[kCopyUnroll];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) {
      const std::uint64_t index = base + std::uint64_t(u) * kThreads + threadIdx.x;
      if (index < packs) {
        loaded[u] = __ldcg(from + index);
      }
    }
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) {
      const std::uint64_t index = base + std::uint64_t(u) * kThreads + threadIdx.x;
      if (index < packs) {
        to[index] = loaded[u];
      }
    }
  }
  const auto* from_bytes = static_cast<const unsigned char*>(source);
  auto* to_bytes = static_cast<unsigned char*>(destination);
  for (std::uint64_t i = packs * 16 + threadIdx.x; i < bytes; i += kThreads) {
    to_bytes[i] = __ldcg(from_bytes + i);
  }
}

// destination[i] = op over the ranks' halves (in rank order, so every rank's result is bitwise
// equal) of element i. The halves start 16-byte aligned, but a reduce_scatter slice starts at
// any element, and so may the destination: 16-byte packs only where both are aligned.
template <typename T, typename Op>
__device__ void reduce_block(const char* const* halves, int ranks, T* destination, std::uint64_t elements) {
  constexpr std::uint64_t kPerPack = 16 / sizeof(T);
  const std::uint64_t packs = aligned16(destination) && aligned16(halves[0]) ? elements / kPerPack : 0;
  constexpr std::uint64_t kRound = std::uint64_t(kThreads) * kReduceUnroll;
  for (std::uint64_t base = 0; base < packs; base += kRound) {
    Pack<T> loaded[kReduceUnroll][kMaxRanks];
#pragma unroll
    for (int u = 0; u < kReduceUnroll; ++u) {
      const std::uint64_t index = base + std::uint64_t(u) * kThreads + threadIdx.x;
#pragma unroll
      for (int r = 0; r < kMaxRanks; ++r) {
        if (index < packs && r < ranks) {
          loaded[u][r].raw = __ldcg(reinterpret_cast<const uint4*>(halves[r]) + index);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kReduceUnroll; ++u) {
      const std::uint64_t index = base + std::uint64_t(u) * kThreads + threadIdx.x;
      if (index >= packs) {
        continue;
      }
      reinterpret_cast<uint4*>(destination)[index] = combine_packs<T, Op>(loaded[u], ranks).raw;
    }
  }
  for (std::uint64_t i = packs * kPerPack + threadIdx.x; i < elements; i += kThreads) {
    T value = load_cg(reinterpret_cast<const T*>(halves[0]) + i);
    for (int r = 1; r < ranks; ++r) {
      value = Op::apply(value, load_cg(reinterpret_cast<const T*>(halves[r]) + i));
    }
    destination[i] = value;
  }
}

// Only the family's types are instantiated: the host sends every other type's reduction to the
// kernel of its family (KernelFamily).
template <KernelFamily Family>
__device__ void reduce_step(Reduction reduction, const char* const* halves, int ranks, void* destination,
                            std::uint64_t elements) {
  operators::visit_element_type<__half, __nv_bfloat16>(
      reduction.type,
      [&](auto element) {
        using T = typename decltype(element)::type;
        if constexpr (kElementFamily<T> == Family) {
          operators::visit_operator<decltype(element)::operators>(
              reduction.op,
              [&](auto operation) {
                reduce_block<T, decltype(operation)>(halves, ranks, static_cast<T*>(destination), elements);
                return 0;
              },
              0);
        }
        return 0;
      },
      0);
}

// Polling reads are relaxed (no fence per read); the reader fences once when the value it waits
// for has come (acquire_gpu, acquire_system), and a writer fences before its store (release).
__device__ std::uint64_t load_relaxed(const volatile std::uint64_t* word) {
  return *word;
}

__device__ void acquire_gpu() {
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

__device__ void acquire_system() {
  asm volatile("fence.acq_rel.sys;" ::: "memory");
}

__device__ void store_release_gpu(volatile std::uint64_t* word, std::uint64_t value) {
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
}

__device__ volatile std::uint64_t* line_word(char* region, int word) {
  return reinterpret_cast<volatile std::uint64_t*>(region) + word;
}

__device__ void wait_until_at_least(const volatile std::uint64_t* word, std::uint64_t value) {
  while (load_relaxed(word) < value) {
  }
  acquire_gpu();
}

// Counts this block in on a counter of its rank's line, once its threads' stores are done.
__device__ void count_in(char* region, int word) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(reinterpret_cast<unsigned long long*>(const_cast<std::uint64_t*>(line_word(region, word))),
              1ULL);
  }
}

// This block's share of `total` units among the call's blocks: [first, first + length), in pieces
// of `granule` units so that every block's share starts as aligned as the whole.
struct Share {
  std::uint64_t first;
  std::uint64_t length;
};
__device__ Share share_of(std::uint64_t total, std::uint64_t granule, std::uint32_t blocks) {
  const std::uint64_t per_block = (total + blocks - 1) / blocks;
  const std::uint64_t size = (per_block + granule - 1) / granule * granule;
  const std::uint64_t start = size * blockIdx.x;
  const std::uint64_t first = start < total ? start : total;
  return {first, size < total - first ? size : total - first};
}

__device__ void copy_share(void* destination, const void* source, std::uint64_t bytes, std::uint32_t blocks) {
  const Share share = share_of(bytes, 16, blocks);
  copy_block(static_cast<char*>(destination) + share.first, static_cast<const char*>(source) + share.first,
             share.length);
}

// What a block's thread 0 learns in a call, shared with its threads.
struct Arrivals {
  std::int32_t declined_rank; // the first rank that declined, or -1
  std::uint32_t decline;
};

// Thread 0: waits for every rank's flag of the call.
__device__ void wait_for_ranks(const KernelArguments& arguments, std::uint64_t number, Arrivals* arrivals) {
  arrivals->declined_rank = -1;
  arrivals->decline = 0;
  for (int rank = 0; rank < arguments.ranks; ++rank) {
    const volatile std::uint64_t* flag = line_word(arguments.regions[rank], kFlagEven + int(number & 1U));
    std::uint64_t value = load_relaxed(flag);
    while (value >> kDeclineBits < number) {
      value = load_relaxed(flag);
    }
    const auto decline = static_cast<std::uint32_t>(value & ((1U << kDeclineBits) - 1));
    if (decline != 0 && arrivals->declined_rank < 0) {
      arrivals->declined_rank = rank;
      arrivals->decline = decline;
    }
  }
  acquire_gpu(); // the halves after the flags
}

template <KernelFamily Family>
__device__ void run_steps(const KernelArguments& arguments, const Call& call, std::uint64_t half) {
  const char* halves[kMaxRanks];
  for (std::uint32_t index = 0; index < call.step_count; ++index) {
    const Step& step = call.steps[index];
    if (step.kind == StepKind::Copy) {
      copy_share(step.destination, arguments.regions[step.source] + half + step.source_offset, step.count,
                 call.blocks);
      continue;
    }
    // 16 elements: a whole number of 16-byte packs for every element type.
    const Share share = share_of(step.count, 16, call.blocks);
    const std::uint64_t element = call.element_bytes;
    for (int rank = 0; rank < arguments.ranks; ++rank) {
      halves[rank] = arguments.regions[rank] + half + step.source_offset + share.first * element;
    }
    reduce_step<Family>(call.reduction, halves, arguments.ranks,
                        static_cast<char*>(step.destination) + share.first * element, share.length);
  }
}

// One call, on each of its blocks: the block's share of the contribution into this rank's half;
// block 0 publishes the flag once every block has; every block waits for the ranks' flags and runs
// its share of the steps; block 0 waits for every block's share before it reports done.
template <KernelFamily Family>
__device__ void run_call(const KernelArguments& arguments, const Call& call, Arrivals* arrivals,
                         KernelTimes* times) {
  char* const mine = arguments.regions[arguments.me];
  const std::uint64_t half = kLineBytes + (call.number & 1U) * arguments.slot_bytes;
  if (call.decline == 0 && call.contribution_bytes > 0) {
    copy_share(mine + half, call.contribution, call.contribution_bytes, call.blocks);
  }
  if (call.blocks > 1) {
    count_in(mine, kShared);
  } else {
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      if (call.blocks > 1) {
        wait_until_at_least(line_word(mine, kShared), call.blocks);
      }
      __threadfence();
      store_release_gpu(line_word(mine, kFlagEven + int(call.number & 1U)),
                        call.number << kDeclineBits | call.decline);
      times->flagged = now_ns();
    }
    wait_for_ranks(arguments, call.number, arrivals);
    if (blockIdx.x == 0) {
      times->arrived = now_ns();
    }
  }
  __syncthreads();
  if (arrivals->declined_rank < 0) {
    run_steps<Family>(arguments, call, half);
  }
  if (call.blocks > 1) {
    count_in(mine, kFinished);
  } else {
    __syncthreads();
  }
}

// Block 0, thread 0: the next call's number from the host, or 0 when the kernel has lingered idle
// long enough and leaves. Checks, then leaves unconditionally: a call posted after the last check
// finds `exited` set and the host launches a successor for it, so no call is taken twice or lost.
__device__ std::uint64_t next_call(const KernelArguments& arguments, std::uint64_t handled) {
  Mailbox* const mailbox = arguments.mailbox;
  const std::uint64_t idle_since = now_ns();
  for (;;) {
    const std::uint64_t posted = load_relaxed(&mailbox->posted);
    if (posted > handled) {
      acquire_system(); // the call after its number
      return posted;
    }
    if (now_ns() - idle_since > arguments.linger_ns) {
      return 0;
    }
  }
}

// The other blocks, thread 0: the call block 0 hands on (only calls of several blocks), or 0 when
// the kernel leaves.
__device__ std::uint64_t handed_call(const KernelArguments& arguments, std::uint64_t handled) {
  const volatile std::uint64_t* go = line_word(arguments.regions[arguments.me], kGo);
  for (;;) {
    const std::uint64_t value = load_relaxed(go);
    if (value >> kGoEpochShift == arguments.epoch) {
      const std::uint64_t number = value & kGoLeave;
      if (number == kGoLeave) {
        return 0;
      }
      if (number > handled) {
        acquire_gpu();
        return number;
      }
    }
  }
}

// Reads the call from pinned host memory into shared memory: one 16-byte load per thread, all in
// flight at once (one PCIe round trip), not cached on the GPU.
__device__ void read_call(const Mailbox* mailbox, unsigned char* storage) {
  constexpr int kPacks = sizeof(Call) / sizeof(uint4);
  static_assert(sizeof(Call) % sizeof(uint4) == 0 && kPacks <= kThreads);
  if (threadIdx.x < kPacks) {
    reinterpret_cast<uint4*>(storage)[threadIdx.x] =
        __ldcv(reinterpret_cast<const uint4*>(&mailbox->call) + threadIdx.x);
  }
  __syncthreads();
}

// Block 0, thread 0, after every block's share: the outcome, then (one system-scope fence after
// the outputs and the outcome) done.
__device__ void report_done(Mailbox* mailbox, const Call& call, const Arrivals& arrivals,
                            const KernelTimes& times) {
  mailbox->declined_rank = arrivals.declined_rank;
  mailbox->decline = arrivals.decline;
  mailbox->times.taken = times.taken;
  mailbox->times.flagged = times.flagged;
  mailbox->times.arrived = times.arrived;
  mailbox->times.done = now_ns();
  __threadfence_system();
  mailbox->done = call.number;
}

// Block 0, thread 0, leaving without a call to take: the other blocks leave at `go`, and the host
// sees this launch gone (and launches another for a call it posts or has posted).
__device__ void report_exit(Mailbox* mailbox, volatile std::uint64_t* go, std::uint64_t epoch) {
  store_release_gpu(go, epoch << kGoEpochShift | kGoLeave);
  __threadfence_system();
  mailbox->exited = epoch;
}

template <KernelFamily Family>
__global__ void __launch_bounds__(kThreads) resident_kernel(KernelArguments arguments) {
  __shared__ alignas(16) unsigned char call_storage[sizeof(Call)];
  __shared__ Arrivals arrivals;
  __shared__ KernelTimes times;
  __shared__ std::uint64_t serving;
  __shared__ int takes_part; // this block has a share of the call
  const Call& call = *reinterpret_cast<const Call*>(call_storage);
  Mailbox* const mailbox = arguments.mailbox;
  char* const mine = arguments.regions[arguments.me];
  volatile std::uint64_t* const go = line_word(mine, kGo);
  std::uint64_t handled = 0; // thread 0's: the last call this kernel (or its predecessors) finished
  if (threadIdx.x == 0) {
    handled = mailbox->done;
  }
  for (;;) {
    if (threadIdx.x == 0) {
      serving = blockIdx.x == 0 ? next_call(arguments, handled) : handed_call(arguments, handled);
      takes_part = blockIdx.x == 0 || (serving != 0 && blockIdx.x < *line_word(mine, kGoBlocks));
    }
    __syncthreads();
    if (serving == 0) {
      if (threadIdx.x == 0 && blockIdx.x == 0) {
        report_exit(mailbox, go, arguments.epoch);
      }
      return;
    }
    if (threadIdx.x == 0 && blockIdx.x == 0) {
      times.taken = now_ns();
    }
    if (takes_part == 0) { // handed a call of fewer blocks: block 0 does not wait for this one
      if (threadIdx.x == 0) {
        handled = serving;
      }
      __syncthreads();
      continue;
    }
    read_call(mailbox, call_storage);
    // A call that reduces a type of another family: block 0 (never handed such a call, since it
    // hands none on) leaves before taking it, and the host launches the call's family for it.
    if (call.family != KernelFamily::Any && call.family != Family) {
      if (threadIdx.x == 0) {
        report_exit(mailbox, go, arguments.epoch);
      }
      return;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && call.blocks > 1) {
      // The counters start again for this call; the other blocks touch them only after `go`.
      *line_word(mine, kShared) = 0;
      *line_word(mine, kFinished) = 0;
      *line_word(mine, kGoBlocks) = call.blocks;
      store_release_gpu(go, arguments.epoch << kGoEpochShift | serving);
    }
    if (call.leave != 0) { // the channel closes
      if (threadIdx.x == 0 && blockIdx.x == 0) {
        store_release_gpu(go, arguments.epoch << kGoEpochShift | kGoLeave);
        mailbox->declined_rank = -1;
        __threadfence_system();
        mailbox->done = call.number;
        mailbox->exited = arguments.epoch;
      }
      return;
    }
    run_call<Family>(arguments, call, &arrivals, &times);
    if (threadIdx.x == 0) {
      handled = call.number;
      if (blockIdx.x == 0) {
        if (call.blocks > 1) {
          wait_until_at_least(line_word(mine, kFinished), call.blocks);
        }
        report_done(mailbox, call, arrivals, times);
      }
    }
    __syncthreads();
  }
}

} // namespace

template <KernelFamily Family>
int launch_resident_family(const KernelArguments& arguments, void* stream) noexcept {
  resident_kernel<Family><<<kBlocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(arguments);
  return static_cast<int>(cudaGetLastError());
}

} // namespace commlens::runtime::resident
