#pragma once
// The launcher's name for this process's job, read from the environment it gives every process,
// so that the processes of a job find their place in the run (job_registry.hpp) without a message
// at MPI_Init. Every job, spawned ones included, gets its own name from the launcher.
#include <string>

namespace commlens::pmpi {

// "pmix:<namespace>" (PMIX_NAMESPACE: Open MPI, and any PMIx launcher such as Slurm's or PRRTE's)
// or "ompi:<jobid>" (OMPI_MCA_ess_base_jobid), taken only where the launcher's rank variable of the
// same family (PMIX_RANK, OMPI_COMM_WORLD_RANK) equals world_rank: variables inherited by a process
// the launcher did not start (a singleton run from inside an MPI job) then fail the check. Empty
// when no launcher names the job this way (MPICH's Hydra, a singleton): rank 0 then claims alone
// and tells the others.
std::string launcher_job_key(int world_rank);

} // namespace commlens::pmpi
