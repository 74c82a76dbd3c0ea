#include "commlens/profiler/schema.hpp"

namespace commlens::schema {

// Times are nanoseconds. In a per-rank file they count from that rank's MPI_Init (ranks.init_ns
// holds its CLOCK_MONOTONIC value); in the merged file they count from rank 0's MPI_Init on rank 0's
// clock, every rank corrected by its measured offset and drift.
const std::string_view kCreateTables = R"sql(
CREATE TABLE IF NOT EXISTS run (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ranks (
  rank             INTEGER PRIMARY KEY,
  host             TEXT NOT NULL,
  pid              INTEGER NOT NULL,
  gpu_uuid         TEXT,
  init_ns          INTEGER NOT NULL,   -- CLOCK_MONOTONIC at MPI_Init, this rank's clock
  finalize_ns      INTEGER,            -- relative to init; NULL if the rank never finalized
  clock_offset_ns  INTEGER NOT NULL DEFAULT 0, -- this rank's clock minus rank 0's, at init
  clock_drift_ppb  REAL NOT NULL DEFAULT 0,    -- change of that offset per second of run, in ns/s
  threads          INTEGER NOT NULL DEFAULT 0,
  dropped_events   INTEGER NOT NULL DEFAULT 0, -- trace records lost because the writer fell behind
  summary_overflow INTEGER NOT NULL DEFAULT 0, -- calls not counted because a summary table was full
  finalized        INTEGER NOT NULL DEFAULT 0,
  -- The rank's tick scale: ns = tick_origin_ns + (ticks - tick_origin) * ns_per_tick (CLOCK_MONOTONIC).
  tick_origin      INTEGER,
  tick_origin_ns   INTEGER,
  ns_per_tick      REAL
);
CREATE TABLE IF NOT EXISTS strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS functions (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  family      TEXT NOT NULL,
  tag_or_root INTEGER NOT NULL DEFAULT 0 -- what the call's tag/root slot holds: 0 nothing, 1 tag, 2 root
);
CREATE TABLE IF NOT EXISTS buffer_locations (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
INSERT OR IGNORE INTO buffer_locations VALUES (0, 'unknown'), (1, 'host'), (2, 'device'), (3, 'managed');
CREATE TABLE IF NOT EXISTS datatypes (
  id   INTEGER PRIMARY KEY,            -- equal on every rank of a run (one catalogue per build)
  name TEXT NOT NULL                   -- MPI_INT, MPI_DOUBLE, ...; "derived" for user types
);
CREATE TABLE IF NOT EXISTS implementations (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
INSERT OR IGNORE INTO implementations VALUES (0, 'mpi');
CREATE TABLE IF NOT EXISTS communicators (
  id             INTEGER NOT NULL,   -- equal on every member
  rank           INTEGER NOT NULL,   -- the member process (world rank) that registered it
  local_rank     INTEGER NOT NULL,
  size           INTEGER NOT NULL,
  is_inter       INTEGER NOT NULL,
  members        TEXT NOT NULL,      -- world ranks, comma-separated, in communicator rank order
  remote_members TEXT,               -- inter-communicators: the remote group
  parent_id      INTEGER,
  created_by     INTEGER REFERENCES functions(id),
  name           TEXT,
  created_ns     INTEGER,
  freed_ns       INTEGER,
  local_index    INTEGER,            -- the registering process's own index (decodes trace_chunks)
  PRIMARY KEY (id, rank)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS phases (
  rank           INTEGER NOT NULL,
  phase          INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER,
  pcontrol_level INTEGER,            -- the MPI_Pcontrol level that opened it; NULL for phase 0
  PRIMARY KEY (rank, phase)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mpi_calls (
  id              INTEGER PRIMARY KEY, -- job-wide: rank << 46 | thread << 36 | sequence
  rank            INTEGER NOT NULL,
  thread          INTEGER NOT NULL,
  function_id     INTEGER NOT NULL REFERENCES functions(id),
  start_ns        INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL,
  bytes_sent      INTEGER NOT NULL,
  bytes_recv      INTEGER NOT NULL,
  peer            INTEGER NOT NULL,    -- world rank; -1 none, -2 MPI_PROC_NULL, -3 MPI_ANY_SOURCE
  tag             INTEGER,
  comm_id         INTEGER,
  root            INTEGER,             -- rank in comm_id, rooted collectives only
  request_id      INTEGER,             -- the request posted or completed (mpi_requests)
  buffer_location INTEGER NOT NULL DEFAULT 0 REFERENCES buffer_locations(id),
  implementation  INTEGER NOT NULL DEFAULT 0 REFERENCES implementations(id),
  phase           INTEGER NOT NULL DEFAULT 0,
  datatype        INTEGER REFERENCES datatypes(id) -- of the data sent (else received); NULL: none
);
-- Trace records as the writer stored them: one compact BLOB per drained buffer (event_codec.hpp).
-- The writer turns them into mpi_calls / mpi_requests rows in the background and deletes them;
-- what is left after a crash is turned into rows by `commlens merge`.
CREATE TABLE IF NOT EXISTS trace_chunks (
  id      INTEGER PRIMARY KEY,
  thread  INTEGER NOT NULL,
  count   INTEGER NOT NULL,
  records BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS mpi_requests (
  rank               INTEGER NOT NULL,
  request_id         INTEGER NOT NULL, -- id of the call that posted (or started) it
  function_id        INTEGER NOT NULL REFERENCES functions(id),
  post_ns            INTEGER NOT NULL,
  complete_ns        INTEGER NOT NULL,
  completion_call_id INTEGER NOT NULL, -- the wait/test call that saw it complete
  peer               INTEGER NOT NULL,
  bytes_sent         INTEGER NOT NULL,
  bytes_recv         INTEGER NOT NULL,
  comm_id            INTEGER,
  PRIMARY KEY (rank, request_id, complete_ns)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS call_stats (
  rank          INTEGER NOT NULL,
  function_id   INTEGER NOT NULL REFERENCES functions(id),
  comm_id       INTEGER NOT NULL,      -- -1 for calls without a communicator
  size_bin      INTEGER NOT NULL,      -- k: bytes in [2^k, 2^(k+1)); -1 for zero bytes
  peer          INTEGER NOT NULL,
  phase         INTEGER NOT NULL,
  count         INTEGER NOT NULL,
  bytes_sent    INTEGER NOT NULL,
  bytes_recv    INTEGER NOT NULL,
  time_total_ns INTEGER NOT NULL,
  time_min_ns   INTEGER NOT NULL,
  time_max_ns   INTEGER NOT NULL,
  PRIMARY KEY (rank, function_id, comm_id, size_bin, peer, phase)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS profiler_overhead (
  rank      INTEGER NOT NULL,
  component TEXT NOT NULL,             -- init, writer, finalize, merge
  count     INTEGER NOT NULL,
  time_ns   INTEGER NOT NULL,
  PRIMARY KEY (rank, component)
) WITHOUT ROWID;
)sql";

namespace {
const TableMerge kMerges[] = {
    {"run", true, ""},
    {"functions", true, ""},
    {"datatypes", true, ""},
    {"buffer_locations", true, ""},
    {"implementations", true, ""},
    {"strings", true, ""},
    {"ranks", false, ""},
    {"communicators", false, "created_ns,freed_ns"},
    {"phases", false, "start_ns,end_ns"},
    {"mpi_calls", false, "start_ns,end_ns"},
    {"mpi_requests", false, "post_ns,complete_ns"},
    {"call_stats", false, ""},
    {"profiler_overhead", false, ""},
};
} // namespace
const std::span<const TableMerge> kTableMerges(kMerges);

const std::string_view kCreateAnalysisIndexes = R"sql(
CREATE INDEX IF NOT EXISTS mpi_calls_by_rank_time ON mpi_calls (rank, start_ns);
CREATE INDEX IF NOT EXISTS mpi_calls_by_function ON mpi_calls (function_id, rank);
CREATE INDEX IF NOT EXISTS mpi_requests_by_function ON mpi_requests (function_id, rank);
)sql";

} // namespace commlens::schema
