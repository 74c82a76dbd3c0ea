#pragma once
// What a call's time teaches Dynamic selection's learner (COMMLENS_RUNTIME_SELECT=dynamic): the
// selection (selection/selector.hpp) gave the call a learner's turn; each rank times its own calls;
// at the end of a round the ranks agree on the slowest rank's median per candidate with one
// PMPI_Allreduce on the call's communicator (every rank ends the round on the same call, since
// only calls that ran, which every rank agreed on, count), so every rank makes the same choice.
#include "mpi_header.hpp"
#include "selector.hpp"

#include <cstdint>

namespace commlens::runtime {

// After a call that ran its turn's candidate in `elapsed_ns` on this rank (collective over comm at
// the end of a round).
void learn_from_call(const selection::DynamicTurn& dynamic, MPI_Comm comm, std::uint64_t elapsed_ns);

} // namespace commlens::runtime
