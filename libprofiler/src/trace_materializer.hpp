#pragma once
// Turns trace_chunks into mpi_calls / mpi_requests rows. The writer does this in the background
// for its own file; the merge does it for chunks a rank left behind (killed before it finished).
// Everything needed to decode a rank's chunks is read from the database holding them, so this
// works long after the process is gone.
#include "commlens/profiler/clock.hpp"
#include "commlens/profiler/sqlite.hpp"
#include "trace_rows.hpp"

#include <cstdint>
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

  // Decodes up to max_chunks of the oldest chunks into `out`; deletes them when delete_done (the
  // caller's transaction makes rows and deletion one step). Returns the number of chunks done.
  std::size_t run(TraceRowWriter& out, std::size_t max_chunks, bool delete_done);

private:
  struct FunctionMeaning {
    bool tag = false;
    bool root = false;
  };
  void load_context();
  int phase_of(std::int64_t ns) const;
  std::int64_t comm_id_of(std::uint32_t index) const;
  void store_chunk(TraceRowWriter& out, int thread, std::span<const std::uint8_t> bytes);

  const SqliteDatabase& db_;
  std::string schema_;
  int rank_;
  ClockMap map_;
  std::int64_t init_ns_ = 0;
  TickConverter clock_{0, 0, 1.0};
  std::vector<std::int64_t> communicator_ids_;       // by local index; -1 unknown
  std::vector<std::pair<std::int64_t, int>> phases_; // (start_ns, phase), ordered
  std::vector<FunctionMeaning> functions_;           // by function id
  std::int64_t last_chunk_ = -1;
};

} // namespace commlens
