#pragma once
// Scalasca's wait states from a trace: time a rank spends blocked because its partner came late.
//   late sender: a receive (MPI_Recv, or the wait that completes an MPI_Irecv) entered before the
//     matching send started: it waits from its entry to the send's start.
//   late receiver: a send that can block until its receive is posted (MPI_Send, MPI_Ssend, the
//     wait of an MPI_Issend) entered before the receive was posted: it waits until then.
//   wait at collective: the first ranks to enter a collective wait for the last one (N x N, such
//     as MPI_Allreduce and MPI_Barrier), non-roots of MPI_Bcast or MPI_Scatter for the root, the
//     root of MPI_Reduce or MPI_Gather for the last non-root.
// Each wait is bounded by the call's own duration. Messages pair in MPI's order: the n-th send
// from a to b with a tag on a communicator meets b's n-th receive from a with that tag there.
// Pairs MPI could have matched otherwise are left out: those into a rank that used MPI_ANY_TAG,
// MPI_Sendrecv (whose source is not recorded), matched probes or persistent requests on that
// communicator.
#include "commlens/analysis/report.hpp"
#include "trace_call_scan.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace commlens::analysis::detail {

enum class WaitKind { LateSender, LateReceiver, Collective };

// Waiting time of one kind on one communicator, by the rank that waited, the rank it waited for
// and the function it waited in.
struct WaitBucket {
  WaitKind kind = WaitKind::LateSender;
  std::int64_t comm_id = 0;
  int rank = 0;
  int partner = 0;
  int function_id = 0;
  std::int64_t wait_ns = 0;
  std::uint64_t calls = 0; // calls that waited
  // The longest of those waits: when it began and how long it lasted (the timeline shows it).
  std::int64_t longest_start_ns = 0;
  std::int64_t longest_ns = 0;
};

struct WaitStates {
  std::vector<WaitBucket> buckets;
  // Blocking collectives measured per communicator, and how many of them each rank entered last
  // (or, rooted, was the one waited for): (communicator, rank) -> instances.
  std::map<std::int64_t, std::uint64_t> collective_instances;
  std::map<std::pair<std::int64_t, int>, std::uint64_t> waited_for;
};

// The wait states of every traced call, under the report's rank and phase filter (applied to the
// rank that waits). Reads the trace once (scan_traced_calls).
WaitStates find_wait_states(const Database& database, const ReportFilter& filter);

} // namespace commlens::analysis::detail
