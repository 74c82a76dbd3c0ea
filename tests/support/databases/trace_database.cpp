#include "trace_database.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <vector>

namespace commlens::test {
namespace {

struct Call {
  int rank, thread, function;
  long long start, duration, sent, recv;
  int peer, tag;
};

// Call ids as the profiler makes them (rank << 46 | thread << 36 | sequence, docs/schema.md), each
// lane's sequence in start order from first_sequence: mpi_calls derives rank and thread from the id
// and seeks a lane's calls by time through it.
void insert_calls(TestDatabase& database, std::vector<Call> calls, int implementation,
                  long long first_sequence) {
  std::stable_sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) {
    return std::tie(a.rank, a.thread, a.start) < std::tie(b.rank, b.thread, b.start);
  });
  long long sequence = first_sequence;
  for (const auto& c : calls) {
    const long long id =
        (static_cast<long long>(c.rank) << 46) | (static_cast<long long>(c.thread) << 36) | sequence++;
    database.execute(fmt::format(
        "INSERT INTO mpi_calls (id, rank, thread, function_id, start_ns, end_ns, bytes_sent, bytes_recv, "
        "peer, tag, "
        "comm_id, implementation, phase) VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, 0, {}, 0)",
        id, c.rank, c.thread, c.function, c.start, c.start + c.duration, c.sent, c.recv, c.peer, c.tag,
        implementation));
  }
}

} // namespace

// Two ranks, 1 s each; rank 0 calls from two threads.
//   rank 0 thread 0: 4 x MPI_Send of 1 KiB to rank 1, tag 7, at 1000·i, 100·scale ns each
//   rank 1 thread 0: 4 x MPI_Recv of 1 KiB from rank 0, tag 7, at 1000·i + 50, 100·scale ns each
//   rank 0 thread 0: 4 x MPI_Isend of 8 B to rank 1 at 10000 + 10·i, 10·scale ns; their requests
//                    queue 100, 200, 300, 400 ns (median 200, p95 400, max 400)
//   rank 0 thread 1: 1 x MPI_Allreduce of 64 B at 500 for 3000·scale ns: it overlaps the sends
//   at 1000, 2000 and 3000 (scale 1: 300 ns of overlap), so at most 2 calls are in flight.
void fill_trace_run(TestDatabase& database, int time_scale) {
  database.execute(R"sql(
INSERT INTO run (key, value) VALUES ('mode', 'trace');
INSERT INTO ranks (rank, host, pid, init_ns, finalize_ns, threads, finalized) VALUES
  (0, 'node-a', 100, 0, 1000000000, 2, 1), (1, 'node-a', 101, 0, 1000000000, 1, 1);
INSERT INTO functions (id, name, family) VALUES (1, 'MPI_Send', 'p2p'), (2, 'MPI_Recv', 'p2p'),
  (3, 'MPI_Isend', 'p2p'), (4, 'MPI_Allreduce', 'collective');
INSERT INTO phases (rank, phase, start_ns, end_ns) VALUES (0, 0, 0, NULL), (1, 0, 0, NULL);
INSERT INTO communicators (id, rank, local_rank, size, is_inter, members, name) VALUES
  (0, 0, 0, 2, 0, '0,1', 'MPI_COMM_WORLD'), (0, 1, 1, 2, 0, '0,1', 'MPI_COMM_WORLD');
)sql");
  const long long s = time_scale;
  std::vector<Call> calls;
  for (int i = 0; i < 4; ++i) {
    calls.push_back({0, 0, 1, 1000LL * (i + 1), 100 * s, 1024, 0, 1, 7});
    calls.push_back({1, 0, 2, 1000LL * (i + 1) + 50, 100 * s, 0, 1024, 0, 7});
    calls.push_back({0, 0, 3, 10000 + 10LL * i, 10 * s, 8, 0, 1, 9});
  }
  calls.push_back({0, 1, 4, 500, 3000 * s, 64, 64, -1, -1});
  insert_calls(database, calls, 0, 1);
  for (int i = 0; i < 4; ++i)
    database.execute(fmt::format("INSERT INTO mpi_requests VALUES (0, {}, 3, {}, {}, 99, 1, 8, 0, 0)",
                                 100 + i, 10000 + 10 * i, 10000 + 10 * i + 100 * (i + 1)));
  database.execute(fmt::format(R"sql(
INSERT INTO call_stats VALUES
  (0, 1, 0, 10, 1, 0, 4, 4096, 0, {0}, {1}, {1}),
  (1, 2, 0, 10, 0, 0, 4, 0, 4096, {0}, {1}, {1}),
  (0, 3, 0, 3, 1, 0, 4, 32, 0, {2}, {3}, {3}),
  (0, 4, 0, 6, -1, 0, 1, 64, 64, {4}, {4}, {4});
)sql",
                               400 * s, 100 * s, 40 * s, 10 * s, 3000 * s));
}

void add_runtime_implementation_calls(TestDatabase& database) {
  database.execute("INSERT INTO implementations VALUES (1, 'runtime:ring')");
  std::vector<Call> runtime_calls;
  std::vector<Call> mpi_calls;
  for (int i = 0; i < 4; ++i) {
    mpi_calls.push_back({0, 0, 4, 20000 + 2000LL * i, 1000, 64, 64, -1, -1});
    runtime_calls.push_back({0, 0, 4, 30000 + 2000LL * i, 500, 64, 64, -1, -1});
  }
  insert_calls(database, mpi_calls, 0, 1000);
  insert_calls(database, runtime_calls, 1, 2000);
}

} // namespace commlens::test
