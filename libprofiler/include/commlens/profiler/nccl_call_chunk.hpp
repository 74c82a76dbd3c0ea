#pragma once
// The NCCL collector's per-call fields (the nccl_calls columns) as compact chunks: in trace mode a
// rank file keeps them as one BLOB per batch of a thread's calls (`nccl_call_chunks`), and the
// merge decodes them into the merged file's `nccl_calls` rows, as it does the trace chunks. One
// SQLite row per NCCL call cost the writer more than a microsecond per call on a loaded machine.
//
// Encoding, per call: the call id as a varint difference from the previous call of the chunk (the
// first from 0), then datatype + 1, op + 1, root + 1, peer + 1 and the group depth as varints
// (0: none), and the stream as a zigzag varint difference from the previous call's stream.
#include <cstdint>
#include <string>
#include <vector>

namespace commlens {

class SqliteDatabase;

// What an NCCL call carries beyond the record every call gets (mpi_calls / call_stats).
struct NcclCallDetails {
  static constexpr int kNone = -1;
  static constexpr std::int64_t kNoStream = -1;
  int datatype = kNone;            // ncclDataType_t
  int op = kNone;                  // ncclRedOp_t
  std::int64_t stream = kNoStream; // the cudaStream_t's value; 0 is the legacy default stream
  int root = kNone;                // NCCL rank
  int peer = kNone;                // NCCL rank
  int group_depth = 0;             // ncclGroupStart nesting of the calling thread
};

// One nccl_calls row of a rank.
struct NcclCallFields {
  std::uint64_t call_id = 0;
  NcclCallDetails details;
};

// Appends the encoding of `calls` to `chunk` (which is taken as starting empty).
void encode_nccl_calls(const std::vector<NcclCallFields>& calls, std::string& chunk);
// Decodes a chunk; throws std::runtime_error on a truncated one.
std::vector<NcclCallFields> decode_nccl_calls(const std::string& chunk);

// Merge: turns the attached rank file `schema`'s nccl_call_chunks into nccl_calls rows of `rank`
// (nothing when the file has no such table).
void materialize_nccl_calls(SqliteDatabase& merged, const char* schema, int rank);

} // namespace commlens
