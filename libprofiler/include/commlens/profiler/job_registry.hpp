#pragma once
// The jobs of one run: the job mpirun started and every job it spawned (MPI_Comm_spawn) write into
// one output folder, and each numbers its processes 0..n-1 in its own MPI_COMM_WORLD. So that no
// two processes share a rank file, every job claims a block of run ranks in <output>/commlens-jobs
// (one line per job, rewritten under an flock): job k's processes are run ranks
// first_rank .. first_rank + size - 1, in claim order. The file also says which jobs have
// finished, so that only the last one to finish merges, and `commlens merge` knows jobs whose
// rank files never arrived. Every process of a job may claim on its own, without communicating:
// the job's launcher key (launcher_job_key.hpp) finds the entry its first process created.
#include <functional>
#include <string>
#include <vector>

namespace commlens {

struct JobEntry {
  int job = 0;        // 0, 1, 2 ... in the order the jobs started
  int first_rank = 0; // run rank of the job's MPI_COMM_WORLD rank 0
  int size = 1;       // its MPI_COMM_WORLD size
  bool spawned = false;
  bool finished = false;
  std::string host{}; // of the job's process that created the entry
  long pid = 0;
  std::string key{}; // the launcher's name for the job; empty: the entry is claimed once only
};

inline constexpr const char* kJobRegistryName = "commlens-jobs";

// Called at MPI_Init by a job's rank 0, or by each of its processes when the launcher names the
// job (key, no spaces). A process whose key matches an unfinished entry gets that entry and
// changes nothing. Otherwise a new entry is made: a job that was not spawned starts a new run
// unless a job listed in the file is still running on this host (then it joins that run, as a
// program that connects to it would): the entries and rank files of the earlier run are removed
// first. Throws std::runtime_error naming the file when it cannot be read or written.
JobEntry claim_job(const std::string& directory, int size, bool spawned, const std::string& host, long pid,
                   const std::string& key = {});

// Called by a job's rank 0 at MPI_Finalize once every rank file of the job is closed. When every
// job of the run has now finished, runs when_last (the merge) and returns true; the registry stays
// locked meanwhile, so a job spawned late waits for that merge instead of merging over it.
bool finish_job(const std::string& directory, int job, const std::function<void()>& when_last);

// The entries of <directory>/commlens-jobs; empty when there is none (a run of an older commlens,
// rank files copied elsewhere).
std::vector<JobEntry> read_jobs(const std::string& directory);

} // namespace commlens
