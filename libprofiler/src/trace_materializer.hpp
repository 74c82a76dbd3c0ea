#pragma once
// Turns a rank file's trace_chunks into mpi_calls / mpi_requests rows of the merged file: rank
// files hold chunks only, and the merge decodes them straight into the file it writes (before that,
// extent() reads the chunks' counts and each lane's first and last chunks for the bound on the
// calls and the spans that the timeline tiles' widths need).
// Everything needed to decode a rank's chunks is read from the database holding them, so this
// works long after the process is gone (a killed rank's file included).
#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "commlens/profiler/timeline_tiles.hpp"
#include "trace_rows.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace commlens {

// Maps a rank's times (ns since its own MPI_Init) onto another timeline: t + shift - t * drift.
struct ClockMap {
  std::int64_t shift = 0;
  double drift = 0.0; // ns per ns
  std::int64_t apply(std::int64_t ns) const noexcept {
    return ns + shift - static_cast<std::int64_t>(static_cast<double>(ns) * drift);
  }
};

class TraceMaterializer {
public:
  // schema: "main" for the rank file itself, or the name it is attached under.
  TraceMaterializer(const SqliteDatabase& db, std::string schema, int rank, ClockMap map);

  // Decodes every chunk into `out`, thread by thread: call ids grow within a thread, and thread
  // bits lie above the sequence, so the calls arrive in id order (appends to mpi_call_rows'
  // B-tree), each lane's together. Returns the number of records decoded.
  std::uint64_t run(TraceRowSink& out);

  // The rank's span on the target timeline, as call_lanes::rank_span finds it in a merged file
  // (the earliest first call of its lanes, and the end of the lane-last call that starts last),
  // from each lane's first and last chunks, and a bound on its calls from the chunks' counts:
  // no other chunk is read. Both sources of the bound may exceed the calls: the records counted
  // include request completions, and a lane's range of call ids includes ids given to requests
  // (MPI_Startall) and to calls that were dropped; the smaller is the bound.
  using Extent = TraceExtent;
  Extent extent();

private:
  struct FunctionMeaning {
    bool tag = false;
    bool root = false;
  };
  void load_context();
  int phase_of(std::int64_t ns) const;
  std::int64_t comm_id_of(std::uint32_t index) const;
  std::uint64_t store_chunk(TraceRowSink& out, int thread, std::span<const std::uint8_t> bytes);
  struct ChunkRef {
    int thread;
    std::int64_t id;
    std::int64_t count; // records
  };
  // The chunks thread by thread, each thread's in id order.
  std::vector<ChunkRef> chunk_order() const;
  class ChunkReader {
  public:
    ChunkReader(const SqliteDatabase& db, const std::string& schema);
    // The chunk's records, valid until the next read; empty when it is gone.
    std::span<const std::uint8_t> read(std::int64_t id);

  private:
    SqliteStatement chunk_;
  };
  std::int64_t mapped_ns(std::uint64_t ticks) const;

  const SqliteDatabase& db_;
  std::string schema_;
  int rank_;
  ClockMap map_;
  std::int64_t init_ns_ = 0;
  TickConverter clock_{0, 0, 1.0};
  std::vector<std::int64_t> communicator_ids_;       // by local index; -1 unknown
  std::vector<std::pair<std::int64_t, int>> phases_; // (start_ns, phase), ordered
  std::vector<FunctionMeaning> functions_;           // by function id
};

} // namespace commlens
