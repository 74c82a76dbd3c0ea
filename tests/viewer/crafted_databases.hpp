#pragma once
// Crafted databases the viewer's tests share: the crafted trace run (tests/support/databases/
// trace_database.cpp) with CUDA copies, kernels and NVTX ranges, with a second implementation and
// its runtime_ops rows, or with training steps; their rows are stated here, so tests can state what
// each view must show.
#include "trace_database.hpp"

#include <QDir>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace commlens::viewer::test_support {

// Rank 0: a staged copy issued in MPI call 1 (4 KiB in 1 us: 4.096 GB/s), a peer copy over NVLink
// from device 0 to 1 outside MPI, an IPC copy late in the run; rank 1: one staged copy.
inline constexpr const char* kCopies = R"sql(
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, dst_kind, bytes,
                         stream, copy_kind, path, link, mpi_call_id, correlation_id) VALUES
  (0, 900, 1900, 0, 0, NULL, 'device', 'pinned', 4096, 7, 'DtoH', 'host_staged', NULL, 1, 11),
  (0, 1500, 2500, 0, 0, 1, 'device', 'device', 8192, 8, 'PtoP', 'peer', 'nvlink', NULL, 12),
  (0, 9000, 9500, 0, 0, 0, 'device', 'device', 1000, 7, 'DtoD', 'ipc', NULL, 5, 13),
  (1, 1000, 1200, 1, 1, NULL, 'device', 'pageable', 512, 3, 'DtoH', 'host_staged', NULL, NULL, 14);
)sql";

// The run table of a GPU run; two kernels on rank 0, the second launched in MPI call 1.
inline constexpr const char* kGpuRun = R"sql(
INSERT INTO run (key, value) VALUES ('cuda_collectors', 'on'), ('nvtx_user_ranges', 'on'),
  ('mpit_sampling', 'none: the MPI library exposes no performance variables');
INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) VALUES
  (0, 3000, 3400, 0, 7, 'pack_halo', NULL, 21), (0, 6000, 7000, 0, 7, 'reduce_kernel', 1, 22);
)sql";

// What the runtime decided for the four runtime:ring calls (ids 2000 to 2003) of the A/B run.
inline constexpr const char* kRuntimeOps = R"sql(
INSERT INTO runtime_ops (rank, mpi_call_id, function_id, comm_id, start_ns, end_ns, implementation, algorithm,
                         decision, reason, bytes, bytes_peer, bytes_host, ipc_opens, chunks, streams,
                         decision_source)
SELECT rank, id, function_id, comm_id, start_ns, end_ns, implementation, 'ring', 'runtime', NULL, 64, 48, 0,
       1, 1, 1, 'table:h100 rule 2' FROM mpi_calls WHERE implementation = 1;
)sql";

// Rank 0: "step" encloses "halo", which encloses "pack"; "solve" in the default domain after them.
// Rank 0 enters phase 1 at 5000 (MPI_Pcontrol(2)).
inline constexpr const char* kRanges = R"sql(
INSERT INTO nvtx_ranges (rank, start_ns, end_ns, domain, name) VALUES
  (0, 800, 5000, 'app', 'step'), (0, 1000, 2000, 'app', 'halo'), (0, 1100, 1200, 'app', 'pack'),
  (0, 6000, 7000, NULL, 'solve');
UPDATE phases SET end_ns = 5000 WHERE rank = 0 AND phase = 0;
INSERT INTO phases (rank, phase, start_ns, end_ns, pcontrol_level) VALUES (0, 1, 5000, NULL, 2);
)sql";

// Two training steps on both ranks: phase 1 [2000, 6000) and phase 2 [6000, 8000) opened by
// MPI_Pcontrol(2), phase 3 (tear-down) left open. Each rank spends 1000 ns in one MPI_Allreduce of
// 64 B per step. Kernels were recorded in step 2 only: on each rank a compute kernel [6000, 7000)
// and NCCL's [6500, 7500): compute 1 us, communication 1 us of which half overlapped, idle 0.5 us.
// Copies came from the runtime's calls: 3 on each rank in the steps, at 40 ns of commlens's own
// time a call, so 1.5 copies and 60 ns a step.
inline constexpr const char* kSteps = R"sql(
UPDATE phases SET end_ns = 2000 WHERE phase = 0;
INSERT INTO phases (rank, phase, start_ns, end_ns, pcontrol_level) VALUES
  (0, 1, 2000, 6000, 2), (1, 1, 2000, 6000, 2), (0, 2, 6000, 8000, 2), (1, 2, 6000, 8000, 2),
  (0, 3, 8000, NULL, 2), (1, 3, 8000, NULL, 2);
INSERT INTO call_stats VALUES
  (0, 4, 0, 6, -1, 1, 1, 64, 64, 1000, 1000, 1000), (1, 4, 0, 6, -1, 1, 1, 64, 64, 1000, 1000, 1000),
  (0, 4, 0, 6, -1, 2, 1, 64, 64, 1000, 1000, 1000), (1, 4, 0, 6, -1, 2, 1, 64, 64, 1000, 1000, 1000);
INSERT INTO kernel_recording VALUES (0, 6000, 8000), (1, 6000, 8000);
INSERT INTO cuda_kernels VALUES (0, 6000, 7000, 0, 7, 'gemm', NULL, 1), (0, 6500, 7500, 0, 8, 'ncclDevKernel_AllReduce', NULL, 2),
  (1, 6000, 7000, 0, 7, 'gemm', NULL, 1), (1, 6500, 7500, 0, 8, 'ncclDevKernel_AllReduce', NULL, 2);
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_kind, dst_kind, bytes, stream, copy_kind, path,
                         correlation_id, gpu_timed, copies) VALUES
  (0, 3000, 3100, 0, 'device', 'device', 4096, 7, 'DtoD', 'same_device', 0, 0, 2),
  (0, 6100, 6200, 0, 'device', 'device', 4096, 7, 'DtoD', 'same_device', 0, 0, 1),
  (1, 3000, 3100, 0, 'device', 'device', 8192, 7, 'DtoD', 'same_device', 0, 0, 3);
INSERT INTO profiler_overhead (rank, component, count, time_ns) VALUES
  (0, 'cuda_runtime_calls', 32, 1280), (1, 'cuda_runtime_calls', 16, 640);
)sql";

// Added to the crafted trace run: rank 1 enters an MPI_Recv (tag 11) at 100 ms and waits 150 ms
// for rank 0's MPI_Send at 250 ms, 7.5% of the ranks' 2 s: a late-sender finding. Call ids are
// rank << 46 | sequence, after the run's other calls on each lane.
inline constexpr const char* kLateSender = R"sql(
INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, peer, tag,
                       comm_id, implementation, phase) VALUES
  (100, 0, 0, 1, 250000000, 250000100, 1024, 0, 1, 11, 0, 0, 0),
  (70368744177764, 1, 0, 2, 100000000, 300000000, 0, 1024, 0, 11, 0, 0, 0);
)sql";

inline QString crafted_database(const QString& directory, const char* name, bool gpu, bool implementations,
                                bool steps = false) {
  const auto path = QDir(directory).filePath(QLatin1String(name));
  commlens::test::TestDatabase database(path.toStdString());
  commlens::test::fill_trace_run(database);
  if (gpu) {
    database.execute(kCopies);
    database.execute(kRanges);
    database.execute(kGpuRun);
  }
  if (steps)
    database.execute(kSteps);
  if (implementations) {
    commlens::test::add_runtime_implementation_calls(database);
    database.execute(kRuntimeOps);
  }
  return path;
}

// The four crafted runs the crafted and timeline tests open, made in a folder removed at the end.
struct CraftedRuns {
  QTemporaryDir directory;
  QString gpu = crafted_database(directory.path(), "gpu.sqlite", true, false);
  QString ab = crafted_database(directory.path(), "ab.sqlite", false, true);
  QString plain = crafted_database(directory.path(), "plain.sqlite", false, false);
  QString steps = crafted_database(directory.path(), "steps.sqlite", false, false, true);
};

inline bool all_of_unit(const QStringList& labels, const QString& unit) {
  return !labels.isEmpty() && std::all_of(labels.begin(), labels.end(),
                                          [&](const QString& label) { return label.endsWith(unit); });
}

std::vector<std::int64_t> starts_of(const auto& items) {
  std::vector<std::int64_t> starts;
  for (const auto& item : items)
    starts.push_back(item.start_ns);
  return starts;
}

} // namespace commlens::viewer::test_support
