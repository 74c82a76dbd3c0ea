#pragma once
// How a collector joins libcommlens.so's MPI_Init and MPI_Finalize (collectors/pmpi/lifecycle.cpp)
// without the PMPI collector naming it: each collector linked into the library gives one
// CollectorLifecycle, and collectors/linked_collectors.cpp lists them. During the run a collector
// reaches the calls through its slot in collector_hooks.hpp.
#include "commlens/profiler/profiler.hpp"

#include <span>
#include <string>
#include <vector>

namespace commlens::pmpi {

struct CollectorLifecycle {
  const char* name;
  // The functions the collector intercepts besides MPI's: appended to the functions table after
  // the MPI functions, in the order of the list; start() receives the whole table.
  std::span<const FunctionDescription> (*functions)() = nullptr;
  // Before PMPI_Init or PMPI_Init_thread, with the thread level asked for (MPI_T must be
  // initialised before MPI: collectors/mpit/mpit_collector.hpp says why).
  void (*before_mpi_init)(int required_thread_level) = nullptr;
  // In MPI_Init once the profiler runs and the clocks are aligned, in the order of the list
  // (required; the others may stay null).
  void (*start)(Profiler& profiler, std::span<const FunctionDescription> functions) = nullptr;
  // MPI_Init when the profiler did not start in this process: undoes before_mpi_init.
  void (*not_started)() = nullptr;
  // MPI_Finalize, after every slot's finalize and before the profiler stops.
  void (*finished)() = nullptr;
  // Started instead of `start` in a process that never initialises MPI, where a collector of
  // another API starts the profiler (collectors/nccl/nccl_without_mpi.hpp); makes no MPI call.
  // Null: the collector needs MPI and stays off there.
  void (*start_without_mpi)(Profiler& profiler, std::span<const FunctionDescription> functions) = nullptr;
};

// Every collector linked into libcommlens.so besides the PMPI collector, in start order.
std::span<const CollectorLifecycle> linked_collectors();

// What the PMPI collector (lifecycle.cpp, finalize.cpp) also lends a collector that starts the
// profiler without MPI: the run's functions table (MPI's, then the linked collectors'), the
// process's command line, and a job's end at rank 0 (marks it finished in the run's registry; the
// last job to finish merges).
std::vector<FunctionDescription> run_functions();
std::string command_line();
void finish_job_and_merge_if_last(const Config& config, const ProcessIdentity& identity);
// Where the warnings about bad settings go (Config's, and the GPU runtime's that the CUDA plugin's
// loader reads): stderr, from world rank 0 only, since every rank reads the same environment.
Config::Warn settings_warning(int world_rank);

} // namespace commlens::pmpi
