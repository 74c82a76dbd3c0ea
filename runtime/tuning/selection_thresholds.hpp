#pragma once
// The fixed thresholds of the runtime's choices that no tuning table rule covers (the table chooses
// among allreduce algorithms and the point-to-point striping share, tuning_table.hpp). Kept here,
// beside the table, so that every number the runtime selects by is in tuning/.
#include <cstddef>
#include <cstdint>

namespace commlens::runtime::tuning {

// Device point-to-point: a contiguous device message of at least this size to a rank that can map
// the sender's GPU goes as a rendezvous over CUDA IPC (a header in place of the message, one copy
// engine transfer); smaller ones through the host path, whose two pinned copies cost less than
// mapping the sender's buffer and a hand-over through shared memory (docs/runtime.md).
inline constexpr std::size_t kRendezvousMinBytes = std::size_t{64} << 10;

// First use of peer buffers by an allreduce: opening their IPC handles is weighed against the host
// path's estimate for the same data, kHostPathFixedNs + kHostPathNsPerByte per byte (the
// shared-GPU host-staged baseline measured on one H100 80GB HBM3: about 1 ms per MiB with four
// ranks, plus its fixed cost), the Dynamic copy-type selection of "Design considerations for
// GPU-aware collective communications in MPI" (Faraji and Afsahi).
inline constexpr std::uint64_t kHostPathFixedNs = 50'000;
inline constexpr std::uint64_t kHostPathNsPerByte = 1;
// The open time assumed for an IPC handle before this process has timed one of its own.
inline constexpr std::uint64_t kTypicalIpcOpenNs = 2'300'000;

} // namespace commlens::runtime::tuning
