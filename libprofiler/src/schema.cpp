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
  dropped_events   INTEGER NOT NULL DEFAULT 0, -- trace records lost (threads beyond the thread limit, calls after the last flush)
  summary_overflow INTEGER NOT NULL DEFAULT 0, -- calls not counted because a summary table was full
  finalized        INTEGER NOT NULL DEFAULT 0,
  -- The rank's tick scale: ns = tick_origin_ns + (ticks - tick_origin) * ns_per_tick (CLOCK_MONOTONIC).
  tick_origin      INTEGER,
  tick_origin_ns   INTEGER,
  ns_per_tick      REAL,
  job              INTEGER NOT NULL DEFAULT 0, -- jobs.job: 0 for the job mpirun started
  job_rank         INTEGER,                    -- rank in that job's MPI_COMM_WORLD
  -- Wall time during which at least one of the rank's threads was inside an MPI call (NULL in files
  -- of older versions); below the sum of thread_stats.time_in_mpi_ns when threads overlapped.
  mpi_wall_ns      INTEGER
);
-- The jobs of the run: the one mpirun started and every job spawned from it (MPI_Comm_spawn).
-- Job k's processes are ranks first_rank .. first_rank + size - 1.
CREATE TABLE IF NOT EXISTS jobs (
  job        INTEGER PRIMARY KEY,
  first_rank INTEGER NOT NULL,
  size       INTEGER NOT NULL,       -- its MPI_COMM_WORLD size
  spawned    INTEGER NOT NULL        -- 1: started by MPI_Comm_spawn(_multiple)
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
-- The trace's calls: mpi_call_rows stores them compactly, and mpi_calls (below) is the public view of
-- them. The call id is the rowid: rank << 46 | thread << 36 | sequence, so rank and thread are not
-- stored, a lane's calls are contiguous and in time order (docs/schema.md), and a time seek needs
-- no index (call_lanes.hpp). `code` packs the small enumerations; docs/design.md gives the bytes.
CREATE TABLE IF NOT EXISTS mpi_call_rows (
  id             INTEGER PRIMARY KEY,
  start_ns       INTEGER NOT NULL,
  duration_ns    INTEGER NOT NULL,   -- end_ns - start_ns
  code           INTEGER NOT NULL,   -- function_id | buffer_location << 11 | implementation << 13
                                     -- | (tag_or_root holds the root) << 17 | phase << 18
  peer           INTEGER NOT NULL,
  bytes_sent     INTEGER NOT NULL,
  bytes_recv     INTEGER NOT NULL,
  tag_or_root    INTEGER,            -- the tag, or the root when code's bit 17 is set
  comm_id        INTEGER,
  datatype       INTEGER,
  request_offset INTEGER             -- id - request_id: 0 for the request a call posts
);
CREATE VIEW IF NOT EXISTS mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent,
  bytes_recv, peer, tag, comm_id, root, request_id, buffer_location, implementation, phase, datatype) AS
SELECT id, id >> 46, (id >> 36) & 1023, code & 2047, start_ns, start_ns + duration_ns, bytes_sent,
  bytes_recv, peer, CASE WHEN code & 131072 = 0 THEN tag_or_root END, comm_id,
  CASE WHEN code & 131072 <> 0 THEN tag_or_root END, id - request_offset, (code >> 11) & 3,
  (code >> 13) & 15, code >> 18, datatype
FROM mpi_call_rows;
-- Rows written through the view (tests, tools) are encoded as the merge encodes them.
CREATE TRIGGER IF NOT EXISTS mpi_calls_insert INSTEAD OF INSERT ON mpi_calls BEGIN
  SELECT RAISE(ABORT, 'mpi_calls: id must be rank << 46 | thread << 36 | sequence')
    WHERE NEW.rank IS NOT NEW.id >> 46 OR NEW.thread IS NOT (NEW.id >> 36) & 1023;
  SELECT RAISE(ABORT, 'mpi_calls: function_id, buffer_location or implementation out of range')
    WHERE NEW.function_id NOT BETWEEN 0 AND 2047 OR coalesce(NEW.buffer_location, 0) NOT BETWEEN 0 AND 3
       OR coalesce(NEW.implementation, 0) NOT BETWEEN 0 AND 15 OR coalesce(NEW.phase, 0) < 0
       OR (NEW.tag IS NOT NULL AND NEW.root IS NOT NULL);
  INSERT INTO mpi_call_rows VALUES (NEW.id, NEW.start_ns, NEW.end_ns - NEW.start_ns,
    NEW.function_id | (coalesce(NEW.buffer_location, 0) << 11) | (coalesce(NEW.implementation, 0) << 13)
      | ((NEW.root IS NOT NULL) << 17) | (coalesce(NEW.phase, 0) << 18),
    NEW.peer, NEW.bytes_sent, NEW.bytes_recv, coalesce(NEW.root, NEW.tag), NEW.comm_id, NEW.datatype,
    NEW.id - NEW.request_id);
END;
-- Trace records as the writer stored them: one compact BLOB per drained piece of a buffer
-- (event_codec.hpp). A rank file holds its trace only here; the merge decodes the chunks into the
-- merged file's mpi_calls / mpi_requests rows, and the merged file holds none.
CREATE TABLE IF NOT EXISTS trace_chunks (
  id      INTEGER PRIMARY KEY,
  thread  INTEGER NOT NULL,
  count   INTEGER NOT NULL,
  records BLOB NOT NULL
);
-- The trace's requests: mpi_request_rows stores them compactly, and mpi_requests (below) is the public
-- view of them. The rowid is the request id, the id of the call that posted it (each activation of
-- a persistent request has its own), so the rank is not stored and a call's request is one rowid
-- seek away.
CREATE TABLE IF NOT EXISTS mpi_request_rows (
  request_id        INTEGER PRIMARY KEY,
  post_ns           INTEGER NOT NULL,
  queue_ns          INTEGER NOT NULL, -- complete_ns - post_ns
  completion_offset INTEGER NOT NULL, -- completion_call_id - request_id
  function_id       INTEGER NOT NULL,
  peer              INTEGER NOT NULL,
  bytes_sent        INTEGER NOT NULL,
  bytes_recv        INTEGER NOT NULL,
  comm_id           INTEGER
);
CREATE VIEW IF NOT EXISTS mpi_requests (rank, request_id, function_id, post_ns, complete_ns,
  completion_call_id, peer, bytes_sent, bytes_recv, comm_id) AS
SELECT request_id >> 46, request_id, function_id, post_ns, post_ns + queue_ns,
  request_id + completion_offset, peer, bytes_sent, bytes_recv, comm_id
FROM mpi_request_rows;
-- Rows written through the view (tests, tools) are stored as the merge stores them; a second row
-- of one request replaces the first.
CREATE TRIGGER IF NOT EXISTS mpi_requests_insert INSTEAD OF INSERT ON mpi_requests BEGIN
  SELECT RAISE(ABORT, 'mpi_requests: request_id must be rank << 46 | thread << 36 | sequence')
    WHERE NEW.rank IS NOT NEW.request_id >> 46;
  INSERT OR REPLACE INTO mpi_request_rows VALUES (NEW.request_id, NEW.post_ns, NEW.complete_ns - NEW.post_ns,
    NEW.completion_call_id - NEW.request_id, NEW.function_id, NEW.peer, NEW.bytes_sent, NEW.bytes_recv,
    NEW.comm_id);
END;
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
-- Per thread and phase: the calls the thread made and the time it spent inside them.
CREATE TABLE IF NOT EXISTS thread_stats (
  rank           INTEGER NOT NULL,
  thread         INTEGER NOT NULL,   -- as mpi_calls.thread: the order in which threads first called MPI
  phase          INTEGER NOT NULL,
  calls          INTEGER NOT NULL,
  time_in_mpi_ns INTEGER NOT NULL,
  PRIMARY KEY (rank, thread, phase)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS profiler_overhead (
  rank      INTEGER NOT NULL,
  component TEXT NOT NULL,             -- init, mpit_init, writer, finalize, merge
  count     INTEGER NOT NULL,
  time_ns   INTEGER NOT NULL,          -- wall time
  cpu_time_ns INTEGER,                 -- the thread's CPU time over the same spans; NULL: not measured
  PRIMARY KEY (rank, component)
) WITHOUT ROWID;
-- MPI_T collector (collectors/mpit). The pvar catalogue: MPI_T's index, name and properties.
CREATE TABLE IF NOT EXISTS pvars (
  id          INTEGER PRIMARY KEY,     -- the MPI_T pvar index (equal on every rank of a run)
  name        TEXT NOT NULL,
  class       TEXT NOT NULL,           -- state, level, size, percentage, highwatermark, lowwatermark,
                                       -- counter, aggregate, timer, generic
  datatype    TEXT NOT NULL,           -- MPI type name of a value (MPI_UNSIGNED, MPI_DOUBLE, ...)
  binding     TEXT NOT NULL,           -- none, communicator, datatype, errhandler, file, group, op,
                                       -- request, window, message, info
  continuous  INTEGER NOT NULL,        -- 1: counts without MPI_T_pvar_start
  readonly    INTEGER NOT NULL,
  verbosity   INTEGER NOT NULL,
  description TEXT,
  selected    INTEGER NOT NULL         -- 1 when COMMLENS_PVARS names it (it is then sampled)
);
-- One handle per sampled pvar and bound object: which were sampled, which failed and why.
CREATE TABLE IF NOT EXISTS pvar_handles (
  rank       INTEGER NOT NULL,
  pvar_id    INTEGER NOT NULL,
  comm_id    INTEGER,                  -- NULL for pvars bound to no object
  elements   INTEGER,                  -- values per read; NULL when allocation failed
  status     TEXT NOT NULL,            -- 'sampled' or why not ('handle allocation failed: ...')
  created_ns INTEGER NOT NULL,
  freed_ns   INTEGER
);
-- One row per element of every read: a per-peer array (ob1 queue lengths) has one per peer.
CREATE TABLE IF NOT EXISTS pvar_samples (
  rank    INTEGER NOT NULL,
  pvar_id INTEGER NOT NULL,
  comm_id INTEGER,                     -- NULL for pvars bound to no object
  time_ns INTEGER NOT NULL,
  value   NUMERIC NOT NULL,
  element INTEGER NOT NULL,            -- index in the pvar's array: the peer's rank in comm_id
  trigger INTEGER NOT NULL,            -- 0 timer, 1 call entry, 2 call exit, 3 MPI_Init, 4 MPI_Finalize
  call_id INTEGER                      -- the mpi_calls id at whose boundary it was read
);
CREATE TABLE IF NOT EXISTS cvars (
  rank        INTEGER NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT,                    -- NULL when bound to an object or unreadable
  datatype    TEXT NOT NULL,
  scope       INTEGER NOT NULL,        -- MPI_T_SCOPE_* value
  description TEXT,
  PRIMARY KEY (rank, name)
) WITHOUT ROWID;
-- NCCL collector (collectors/nccl): what an nccl:* call carries beyond its mpi_calls / call_stats row.
CREATE TABLE IF NOT EXISTS nccl_datatypes (
  id   INTEGER PRIMARY KEY,            -- NCCL's ncclDataType_t value
  name TEXT NOT NULL UNIQUE
);
INSERT OR IGNORE INTO nccl_datatypes VALUES (0, 'ncclInt8'), (1, 'ncclUint8'), (2, 'ncclInt32'),
  (3, 'ncclUint32'), (4, 'ncclInt64'), (5, 'ncclUint64'), (6, 'ncclFloat16'), (7, 'ncclFloat32'),
  (8, 'ncclFloat64'), (9, 'ncclBfloat16'), (10, 'ncclFloat8e4m3'), (11, 'ncclFloat8e5m2');
CREATE TABLE IF NOT EXISTS nccl_ops (
  id   INTEGER PRIMARY KEY,            -- NCCL's ncclRedOp_t value (5 and up: ncclRedOpCreatePreMulSum's)
  name TEXT NOT NULL UNIQUE
);
INSERT OR IGNORE INTO nccl_ops VALUES (0, 'ncclSum'), (1, 'ncclProd'), (2, 'ncclMax'), (3, 'ncclMin'),
  (4, 'ncclAvg');
CREATE TABLE IF NOT EXISTS nccl_calls (  -- trace mode: one row per recorded nccl:* call
  call_id     INTEGER PRIMARY KEY,     -- mpi_calls.id
  rank        INTEGER NOT NULL,
  datatype    INTEGER,                 -- nccl_datatypes.id; NULL: the function has none
  op          INTEGER,                 -- nccl_ops.id; NULL: not a reduction
  stream      INTEGER,                 -- the cudaStream_t's value (0: legacy default stream)
  root        INTEGER,                 -- rank of the NCCL communicator
  peer        INTEGER,                 -- rank of the NCCL communicator (ncclSend / ncclRecv)
  group_depth INTEGER NOT NULL         -- ncclGroupStart nesting (group calls: the level they open/close)
);
-- Trace mode, rank files only: nccl_calls' fields of a batch of one thread's calls as one BLOB
-- (nccl_call_chunk.hpp); the merge decodes them into nccl_calls, and the merged file holds none.
CREATE TABLE IF NOT EXISTS nccl_call_chunks (
  id   INTEGER PRIMARY KEY,
  data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS nccl_call_stats ( -- both modes: call_stats' key plus the columns above
  rank          INTEGER NOT NULL,
  function_id   INTEGER NOT NULL REFERENCES functions(id),
  comm_id       INTEGER NOT NULL,
  size_bin      INTEGER NOT NULL,
  phase         INTEGER NOT NULL,
  datatype      INTEGER,
  op            INTEGER,
  stream        INTEGER,
  root          INTEGER,
  peer          INTEGER,
  group_depth   INTEGER NOT NULL,
  count         INTEGER NOT NULL,
  bytes_sent    INTEGER NOT NULL,
  bytes_recv    INTEGER NOT NULL,
  time_total_ns INTEGER NOT NULL,
  time_min_ns   INTEGER NOT NULL,
  time_max_ns   INTEGER NOT NULL
);
-- CUDA collectors (collectors/cupti). One row per memory copy CUPTI saw, classified by path.
CREATE TABLE IF NOT EXISTS cuda_copies (
  rank           INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  device         INTEGER NOT NULL,     -- CUDA device that ran the copy
  src_device     INTEGER,              -- peer copies: source and destination devices; else = device
  dst_device     INTEGER,
  src_kind       TEXT NOT NULL,        -- pageable, pinned, device, managed, array, unknown
  dst_kind       TEXT NOT NULL,
  bytes          INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  copy_kind      TEXT NOT NULL,        -- CUPTI's direction: HtoD, DtoH, DtoD, HtoH, PtoP, ...
  path           TEXT NOT NULL,        -- host_staged, peer, ipc, same_device, managed, host_to_host, other
  link           TEXT,                 -- peer and ipc copies between two devices: nvlink or pcie
  mpi_call_id    INTEGER,              -- mpi_calls.id of the MPI call that issued it; NULL outside MPI
  correlation_id INTEGER NOT NULL,     -- CUPTI correlation id: the driver API call's (cuda_api_calls);
                                       -- copies from the runtime's calls (no CUPTI): their
                                       -- call's row's, numbered by commlens (trace), or 0
  runtime_correlation_id INTEGER,      -- the runtime API call's around it; NULL when none
  gpu_timed      INTEGER NOT NULL DEFAULT 1, -- 1: start_ns and end_ns are the copy's time on the GPU;
                                       -- 0: its host call's (taken from the runtime's calls, not
                                       -- sampled for GPU timing: COMMLENS_CUDA_COPIES)
  copies         INTEGER NOT NULL DEFAULT 1 -- copies the row stands for: in summary mode, a run of
                                       -- untimed copies from the runtime's calls (bytes summed)
);
CREATE TABLE IF NOT EXISTS cuda_kernels (
  rank           INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  device         INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  name           TEXT NOT NULL,        -- mangled kernel name (ncclDevKernel_..., user kernels)
  mpi_call_id    INTEGER,
  correlation_id INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS cuda_memsets (
  rank           INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  device         INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  memory_kind    TEXT NOT NULL,        -- device, managed, pinned, ... (as cuda_copies.src_kind)
  value          INTEGER NOT NULL,     -- the value set
  mpi_call_id    INTEGER,
  correlation_id INTEGER NOT NULL
);
-- Time threads spent waiting in CUDA synchronisation calls.
CREATE TABLE IF NOT EXISTS cuda_synchronizations (
  rank           INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  kind           TEXT NOT NULL,        -- stream_synchronize, event_synchronize, stream_wait_event, context_synchronize
  context        INTEGER NOT NULL,     -- CUPTI's context id
  stream         INTEGER,              -- NULL for context and event synchronisation
  event          INTEGER,              -- NULL for context and stream synchronisation
  mpi_call_id    INTEGER,
  correlation_id INTEGER NOT NULL
);
-- Trace mode: the host's CUDA runtime and driver API calls that put work on a GPU or wait for it
-- (copies always; launches, memsets, synchronisations and stream waits while kernels are recorded).
CREATE TABLE IF NOT EXISTS cuda_api_calls (
  rank           INTEGER NOT NULL,
  thread         INTEGER,              -- as mpi_calls.thread; NULL: the thread made no MPI or NCCL call
  system_thread  INTEGER NOT NULL,     -- the calling thread's Linux thread id
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  function_id    INTEGER NOT NULL REFERENCES cuda_api_functions(id),
  correlation_id INTEGER NOT NULL      -- equal to that of the kernel, copy or memset the call made
);
CREATE TABLE IF NOT EXISTS cuda_api_functions (
  id     INTEGER PRIMARY KEY,          -- CUPTI's callback id; driver functions 65536 above it
  domain TEXT NOT NULL,                -- runtime, driver
  name   TEXT NOT NULL                 -- cudaLaunchKernel, cudaMemcpyAsync, cuMemcpyHtoD_v2, ...
);
-- Spans of time in which the CUDA collector recorded every kernel (COMMLENS_KERNELS): outside them
-- cuda_kernels, cuda_memsets and cuda_synchronizations hold nothing, whatever ran.
CREATE TABLE IF NOT EXISTS kernel_recording (
  rank     INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns   INTEGER NOT NULL
);
-- The GPU time of NCCL calls, from CUDA events recorded on the call's stream before and after it:
-- from when the stream reached the call's work to when that work ended. Trace mode: one row per call.
CREATE TABLE IF NOT EXISTS device_spans (
  call_id  INTEGER PRIMARY KEY,        -- mpi_calls.id
  rank     INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns   INTEGER NOT NULL
);
-- Both modes: device_spans summed per function, communicator, size bin and phase.
CREATE TABLE IF NOT EXISTS device_span_stats (
  rank          INTEGER NOT NULL,
  function_id   INTEGER NOT NULL REFERENCES functions(id),
  comm_id       INTEGER NOT NULL,
  size_bin      INTEGER NOT NULL,
  phase         INTEGER NOT NULL,
  count         INTEGER NOT NULL,
  time_total_ns INTEGER NOT NULL,
  time_min_ns   INTEGER NOT NULL,
  time_max_ns   INTEGER NOT NULL
);
-- The application's own NVTX push/pop and start/end ranges (libraries' domains excluded: NCCL's,
-- commlens' MPI ranges, ...).
CREATE TABLE IF NOT EXISTS nvtx_ranges (
  rank     INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns   INTEGER NOT NULL,
  domain   TEXT,                       -- NULL for the default domain
  name     TEXT
);
-- CUDA IPC calls: handle export, open (the costly mapping) and close.
CREATE TABLE IF NOT EXISTS ipc_events (
  rank        INTEGER NOT NULL,
  event       TEXT NOT NULL,           -- get_handle, open, close
  start_ns    INTEGER NOT NULL,
  end_ns      INTEGER NOT NULL,
  device      INTEGER,
  address     INTEGER,                 -- the exported or mapped device address
  bytes       INTEGER,                 -- size of the mapped allocation (open, close)
  handle      TEXT,                    -- hash of the IPC handle: equal for opens of one allocation
  open_number INTEGER,                 -- open: 1 for the first open of this handle, n for the n-th
  mpi_call_id INTEGER
);
-- GPU collective runtime (runtime/): one row per call the runtime was asked to take, whether it ran
-- it or handed it to the baseline (then reason says why).
CREATE TABLE IF NOT EXISTS runtime_ops (
  rank           INTEGER NOT NULL,
  mpi_call_id    INTEGER NOT NULL,     -- mpi_calls.id of the call (trace mode)
  function_id    INTEGER NOT NULL REFERENCES functions(id),
  comm_id        INTEGER,              -- communicators.id
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  implementation INTEGER NOT NULL REFERENCES implementations(id), -- what ran, as in mpi_calls
  algorithm      TEXT NOT NULL,        -- two_shot, host_staged, pmpi
  decision       TEXT NOT NULL,        -- runtime, ab_baseline, fallback
  reason         TEXT,                 -- fallback: why the runtime declined
  bytes          INTEGER NOT NULL,     -- the call's data (count x type size)
  bytes_peer     INTEGER NOT NULL,     -- bytes this rank loaded from other ranks' GPU memory
  bytes_host     INTEGER NOT NULL,     -- bytes this rank copied through host memory (each way)
  ipc_opens      INTEGER NOT NULL,     -- IPC handles this call had to open (cache misses)
  chunks         INTEGER NOT NULL,
  streams        INTEGER NOT NULL,
  decision_source TEXT,                -- what chose the algorithm: table:h100 rule 2, forced, fallback
  -- Host phases of a blocking call (ns; NULL for nonblocking collectives): publishing its buffers
  -- (the producers' wait included), the peers' buffers looked up or opened, waiting at the
  -- agreement's barriers, and at every node-segment barrier of the call (the agreement's included).
  publish_ns     INTEGER,
  map_ns         INTEGER,
  agree_ns       INTEGER,
  barrier_ns     INTEGER
);
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
    {"jobs", true, ""},
    {"communicators", false, "created_ns,freed_ns"},
    {"phases", false, "start_ns,end_ns"},
    {"mpi_calls", false, "start_ns,end_ns"},
    {"mpi_requests", false, "post_ns,complete_ns"},
    {"call_stats", false, ""},
    {"thread_stats", false, ""},
    {"profiler_overhead", false, ""},
    {"pvars", true, ""},
    {"pvar_handles", false, "created_ns,freed_ns"},
    {"pvar_samples", false, "time_ns"},
    {"cvars", false, ""},
    {"nccl_datatypes", true, ""},
    {"nccl_ops", true, ""},
    {"nccl_calls", false, ""},
    {"nccl_call_stats", false, ""},
    {"cuda_copies", false, "start_ns,end_ns"},
    {"cuda_kernels", false, "start_ns,end_ns"},
    {"cuda_memsets", false, "start_ns,end_ns"},
    {"cuda_synchronizations", false, "start_ns,end_ns"},
    {"cuda_api_calls", false, "start_ns,end_ns"},
    {"cuda_api_functions", true, ""},
    {"kernel_recording", false, "start_ns,end_ns"},
    {"device_spans", false, "start_ns,end_ns"},
    {"device_span_stats", false, ""},
    {"nvtx_ranges", false, "start_ns,end_ns"},
    {"ipc_events", false, "start_ns,end_ns"},
    {"runtime_ops", false, "start_ns,end_ns"},
};
} // namespace
const std::span<const TableMerge> kTableMerges(kMerges);

} // namespace commlens::schema
