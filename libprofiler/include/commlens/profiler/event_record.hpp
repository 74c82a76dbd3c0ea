#pragma once
// The fixed-size record every collector appends to its thread's buffer.
// 64 bytes so a record is one cache line and a buffer is a plain array.
#include <cstdint>

namespace commlens {

using FunctionId = std::uint16_t;

enum class RecordKind : std::uint8_t {
  Call = 0,              // one intercepted call: start/end, bytes, peer, ...
  RequestCompletion = 1, // a nonblocking or persistent request completed
};

enum class BufferLocation : std::uint8_t { Unknown = 0, Host = 1, Device = 2, Managed = 3 };

inline constexpr std::int32_t kNoPeer = -1;        // the call has no peer (collectives, waits)
inline constexpr std::int32_t kPeerProcNull = -2;  // MPI_PROC_NULL
inline constexpr std::int32_t kPeerAnySource = -3; // MPI_ANY_SOURCE not yet resolved
inline constexpr std::int32_t kNoTagOrRoot = -1;
inline constexpr std::uint32_t kNoCommunicator = 0xFFFFFFFFu;

struct alignas(64) EventRecord {
  // Call: entry and exit. RequestCompletion: post and completion.
  std::uint64_t start_ticks;
  std::uint64_t end_ticks;
  // Call: this call's id. RequestCompletion: the id of the call that observed the completion.
  std::uint64_t call_id;
  std::uint64_t bytes_sent;
  std::uint64_t bytes_recv;
  // Call: the request it posted or completed (0: none). RequestCompletion: the request.
  std::uint64_t request_id;
  // Index into the process's CommunicatorTable, resolved to a job-wide id by the writer.
  std::uint32_t communicator_index;
  std::int32_t peer; // world rank, or one of the kPeer* values
  // Point-to-point calls store the tag, rooted collectives the root (as a rank of the communicator),
  // MPI_Pcontrol the level: a call has at most one of them.
  std::int32_t tag_or_root;
  // Call: the function. RequestCompletion: the function that posted the request.
  FunctionId function;
  // Index into the process's datatype catalogue (0: the call has no datatype).
  std::uint8_t datatype;
  RecordKind kind : 1;
  BufferLocation location : 3;
  std::uint8_t implementation : 4; // 0 = the MPI library; others index RuntimeImplementation names
};
static_assert(sizeof(EventRecord) == 64, "an event record must stay one cache line");

} // namespace commlens
