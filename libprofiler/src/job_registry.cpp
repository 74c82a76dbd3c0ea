#include "commlens/profiler/job_registry.hpp"

#include "commlens/profiler/rank_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace commlens {

namespace {

// The registry this thread holds locked, -1 for none. An flock belongs to the open file, so the
// merge that finish_job runs under the lock would wait forever for read_jobs' own lock on a second
// open of the same file: read_jobs takes none on the file this thread holds (and is not writing).
thread_local int registry_locked_here = -1;

bool same_file(int a, int b) {
  struct stat first {};
  struct stat second {};
  return fstat(a, &first) == 0 && fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
         first.st_ino == second.st_ino;
}

// The registry file, open and flock'ed for as long as the object lives.
class LockedRegistry {
public:
  explicit LockedRegistry(const std::string& directory)
      : path_((std::filesystem::path(directory) / kJobRegistryName).string()),
        fd_(open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || flock(fd_, LOCK_EX) != 0) {
      const std::string reason = std::strerror(errno);
      if (fd_ >= 0) {
        close(fd_);
      }
      throw std::runtime_error(fmt::format("{}: {}", path_, reason));
    }
    outer_lock_ = registry_locked_here;
    registry_locked_here = fd_;
  }
  ~LockedRegistry() {
    registry_locked_here = outer_lock_;
    close(fd_); // releases the lock
  }
  LockedRegistry(const LockedRegistry&) = delete;
  LockedRegistry& operator=(const LockedRegistry&) = delete;

  std::vector<JobEntry> read() const {
    std::string text;
    char buffer[4096];
    for (ssize_t got = pread(fd_, buffer, sizeof buffer, 0); got > 0;
         got = pread(fd_, buffer, sizeof buffer, static_cast<off_t>(text.size()))) {
      text.append(buffer, static_cast<std::size_t>(got));
    }
    return parse(text);
  }

  void write(const std::vector<JobEntry>& jobs) const {
    std::string text;
    for (const JobEntry& e : jobs) {
      text += fmt::format("{} {} {} {} {} {} {} {}\n", e.job, e.first_rank, e.size,
                          e.spawned ? "spawned" : "launched", e.finished ? "finished" : "running", e.host,
                          e.pid, e.key.empty() ? "-" : e.key);
    }
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      throw std::runtime_error(fmt::format("{}: {}", path_, std::strerror(errno)));
    }
  }

  static std::vector<JobEntry> parse(const std::string& text) {
    std::vector<JobEntry> jobs;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      JobEntry e;
      std::string how;
      std::string state;
      if (fields >> e.job >> e.first_rank >> e.size >> how >> state >> e.host >> e.pid) {
        e.spawned = how == "spawned";
        e.finished = state == "finished";
        fields >> e.key; // absent in files of older versions
        e.key = e.key == "-" ? "" : e.key;
        jobs.push_back(e);
      }
    }
    return jobs;
  }

private:
  std::string path_;
  int fd_;
  int outer_lock_ = -1; // the registry this thread held before, if any
};

bool process_alive(const JobEntry& entry) {
  return kill(static_cast<pid_t>(entry.pid), 0) == 0 || errno == EPERM;
}

// Only a process on this host can be checked; an entry of another host, or of a process that is
// gone, belongs to a run that ended (or was killed).
bool still_running(const JobEntry& entry, const std::string& host) {
  return !entry.finished && entry.host == host && process_alive(entry);
}

void remove_rank_files(const std::string& directory, const std::vector<JobEntry>& jobs) {
  for (const JobEntry& job : jobs) {
    for (int rank = job.first_rank; rank < job.first_rank + job.size; ++rank) {
      remove_rank_file((std::filesystem::path(directory) / rank_database_name(rank)).string());
    }
  }
}

} // namespace

JobEntry claim_job(const std::string& directory, int size, bool spawned, const std::string& host, long pid,
                   const std::string& key) {
  std::error_code ignored;
  std::filesystem::create_directories(directory, ignored); // a failure shows in the open below
  const LockedRegistry registry(directory);
  std::vector<JobEntry> jobs = registry.read();
  // A finished entry with this key, or one whose creator on this host is gone, is an earlier run's
  // (launchers reuse their numbers): every process of a job claims before any of them can finish
  // (MPI_Finalize's barrier comes first), and the creator lives until then.
  const auto same_job = std::find_if(jobs.begin(), jobs.end(), [&](const JobEntry& e) {
    return !key.empty() && e.key == key && e.size == size && !e.finished &&
           (e.host != host || process_alive(e));
  });
  if (same_job != jobs.end()) {
    return *same_job;
  }
  const bool joins_a_running_run = spawned || std::any_of(jobs.begin(), jobs.end(), [&](const JobEntry& e) {
                                     return still_running(e, host);
                                   });
  if (!joins_a_running_run) {
    remove_rank_files(directory, jobs);
    jobs.clear();
  }
  JobEntry entry{static_cast<int>(jobs.size()), 0, size, spawned, false, host, pid, key};
  for (const JobEntry& e : jobs) {
    entry.first_rank = std::max(entry.first_rank, e.first_rank + e.size);
  }
  jobs.push_back(entry);
  registry.write(jobs);
  return entry;
}

bool finish_job(const std::string& directory, int job, const std::function<void()>& when_last) {
  const LockedRegistry registry(directory);
  std::vector<JobEntry> jobs = registry.read();
  for (JobEntry& e : jobs) {
    e.finished = e.finished || e.job == job;
  }
  registry.write(jobs);
  const bool last = std::all_of(jobs.begin(), jobs.end(), [](const JobEntry& e) { return e.finished; });
  if (last) {
    when_last();
  }
  return last;
}

std::vector<JobEntry> read_jobs(const std::string& directory) {
  // Read-only (the merge may read a folder it cannot write to), under a shared lock: a job that
  // rewrites the file (truncates, then writes) while another job's rank 0 reads it at
  // MPI_Finalize would otherwise show it no job at all.
  const std::string path = (std::filesystem::path(directory) / kJobRegistryName).string();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return {};
  }
  if (!same_file(fd, registry_locked_here)) {
    flock(fd, LOCK_SH); // a file system without locks is read as it is
  }
  std::string text;
  char buffer[4096];
  for (ssize_t got = pread(fd, buffer, sizeof buffer, 0); got > 0;
       got = pread(fd, buffer, sizeof buffer, static_cast<off_t>(text.size()))) {
    text.append(buffer, static_cast<std::size_t>(got));
  }
  close(fd); // releases the lock
  return LockedRegistry::parse(text);
}

} // namespace commlens
