#include "finalize_merge.hpp"

#include "file_transfer.hpp"
#include "finalize.hpp"
#include "part_handover.hpp"

#include "commlens/profiler/job_registry.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <stdexcept>

namespace commlens::pmpi {

namespace {

namespace fs = std::filesystem;

constexpr int kHandoverTag = 0x4D00;

// A file as a folder sees it: whether it is there, its size, modification time and inode (on a
// network file system the server's, the same on every client).
using Fingerprint = std::array<std::int64_t, 5>;
Fingerprint fingerprint(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return {0, 0, 0, 0, 0};
  }
  return {1, static_cast<std::int64_t>(info.st_size), static_cast<std::int64_t>(info.st_mtim.tv_sec),
          static_cast<std::int64_t>(info.st_mtim.tv_nsec), static_cast<std::int64_t>(info.st_ino)};
}

std::string place_of(const ProcessIdentity& identity, const std::string& directory) {
  std::error_code error;
  const fs::path absolute = fs::absolute(directory, error);
  return identity.host + ":" + (error ? directory : absolute.lexically_normal().string());
}

void add_places(std::vector<RanksLeftBehind>& to, const std::vector<RanksLeftBehind>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::vector<int> ranks_in(const std::vector<RanksLeftBehind>& places) {
  std::vector<int> ranks;
  for (const RanksLeftBehind& place : places) {
    ranks.insert(ranks.end(), place.ranks.begin(), place.ranks.end());
  }
  return ranks;
}

// Every rank, once rank 0's database is written: whether it holds every rank (rank 0 says). The
// ranks wait without spinning, leaving the cores to the leaders still merging.
bool wait_for_the_merge(const FinalizeTopology& topology, std::int64_t complete) {
  MPI_Request request = MPI_REQUEST_NULL;
  PMPI_Ibcast(&complete, 1, MPI_INT64_T, 0, topology.world(), &request);
  wait_without_spinning(request);
  return complete != 0;
}

// A folder's leader in the tree.
class Leader {
public:
  // `ranks`: those of the folder that kept a file (the others said why, and are missing).
  Leader(const TreeMergeJob& job, MPI_Comm leaders, bool rank0_folder, const std::vector<int>& ranks)
      : job_(job), leaders_(leaders), rank0_folder_(rank0_folder) {
    PMPI_Comm_rank(leaders_, &index_);
    PMPI_Comm_size(leaders_, &size_);
    const std::string place = place_of(job.identity, job.config.output_directory);
    sources_ = MergeSources{job.config.output_directory, ranks, place, {}, {}};
    subtree_.push_back(RanksLeftBehind{ranks, place});
    if (!rank0_folder_) {
      remote_.push_back(RanksLeftBehind{ranks, place});
    }
  }

  // The binomial tree: leader i hands its part to i - 2^k in the round k of its lowest set bit,
  // after taking those of i + 1, i + 2, i + 4 ... in the rounds before.
  void run() {
    for (int step = 1; step < size_; step <<= 1) {
      if ((index_ & step) != 0) {
        hand_over(index_ - step);
        break;
      }
      if (index_ + step < size_) {
        take_from(index_ + step);
      }
    }
    const std::int64_t complete = index_ == 0 ? merge_into_run_database() : 0;
    clean_up(wait_for_the_merge(job_.topology, complete));
  }

private:
  std::string in_folder(const std::string& name) const {
    return (fs::path(job_.config.output_directory) / name).string();
  }

  void hand_over(int parent) {
    PartHandover handover{false, rank0_folder_, {}, {}, subtree_, remote_};
    const std::string part = in_folder(fmt::format("commlens-part-{:05d}.sqlite", job_.identity.run_rank));
    temporary_.push_back(part);
    std::vector<std::string> paths;
    try {
      merge_into_part(sources_, job_.timeline, part);
      paths = part_files(part);
      for (const std::string& path : paths) {
        handover.files.push_back(fs::path(path).filename().string());
        handover.sizes.push_back(fs::file_size(path));
      }
      handover.made = true;
    } catch (const std::exception& error) {
      std::fprintf(stderr, "commlens: the part of ranks %s in %s could not be made: %s\n",
                   describe_ranks(ranks_in(subtree_)).c_str(), sources_.place.c_str(), error.what());
    }
    send_bytes(leaders_, parent, kHandoverTag, encode_handover(handover));
    std::string why;
    if (handover.made && !handover.in_place && !send_files(leaders_, parent, paths, handover.sizes, why)) {
      std::fprintf(stderr, "commlens: the part of ranks %s could not be sent: %s\n",
                   describe_ranks(ranks_in(subtree_)).c_str(), why.c_str());
    }
  }

  void take_from(int child) {
    const PartHandover handover = decode_handover(receive_bytes(leaders_, child, kHandoverTag));
    add_places(subtree_, handover.ranks);
    add_places(remote_, handover.remote);
    if (!handover.made) {
      add_places(sources_.left_behind, handover.ranks);
      return;
    }
    if (handover.in_place) {
      sources_.parts.push_back(PartSource{in_folder(handover.files.front()), handover.ranks});
      return;
    }
    // Stored under names of this leader's own, in its folder.
    std::vector<std::string> paths;
    std::map<std::string, std::string> renamed;
    for (std::size_t file = 0; file < handover.files.size(); ++file) {
      const std::string name = file == 0 ? fmt::format("commlens-received-{:05d}.sqlite", child)
                                         : fmt::format("commlens-received-{:05d}-{}.pages", child, file);
      renamed[handover.files[file]] = name;
      paths.push_back(in_folder(name));
    }
    std::string why;
    if (!receive_files(leaders_, child, paths, handover.sizes, why)) {
      std::fprintf(stderr, "commlens: the part of ranks %s could not be received: %s\n",
                   describe_ranks(ranks_in(handover.ranks)).c_str(), why.c_str());
      add_places(sources_.left_behind, handover.ranks);
      return;
    }
    temporary_.insert(temporary_.end(), paths.begin(), paths.end());
    try {
      rename_part_pages(paths.front(), renamed);
      sources_.parts.push_back(PartSource{paths.front(), handover.ranks});
    } catch (const std::exception& error) {
      std::fprintf(stderr, "commlens: skipping the part %s: %s\n", paths.front().c_str(), error.what());
      add_places(sources_.left_behind, handover.ranks);
    }
  }

  // Rank 0: returns whether the database holds every rank of the job. A job spawned after this one
  // chose the tree (its processes claim their ranks once MPI_Init has connected them) makes this a
  // run of several jobs: the last of them to finish merges every rank file of rank 0's folder in
  // one process, as in any such run, and every folder keeps its rank files.
  std::int64_t merge_into_run_database() {
    const Config& config = job_.config;
    bool complete = false;
    const auto merge = [&] {
      if (read_jobs(config.output_directory).size() > 1) {
        merge_run_in_one_process(config);
        return;
      }
      try {
        MergeOptions options;
        options.directory = config.output_directory;
        const MergeResult result = merge_into_database(sources_, job_.timeline, options);
        report(result);
        complete = result.missing_ranks.empty();
      } catch (const std::exception& error) {
        std::fprintf(stderr, "commlens: merging the rank databases failed: %s\n", error.what());
      }
    };
    try {
      if (!finish_job(config.output_directory, job_.identity.job, merge) && !config.quiet) {
        std::fprintf(stderr, "commlens: job %d finished; the run's last job to finish merges\n",
                     job_.identity.job);
      }
    } catch (const std::runtime_error& error) {
      std::fprintf(stderr, "commlens: cannot mark job %d finished in %s; merging now\n", job_.identity.job,
                   error.what());
      merge();
    }
    return complete ? 1 : 0;
  }

  // Folders named one a line at most; a job of thousands of nodes gets a line counting the rest.
  static constexpr std::size_t kFoldersNamed = 8;

  void report(const MergeResult& result) const {
    // A loss is said even when quiet: the database alone would not show it.
    const std::string losses = describe_losses(result);
    if (!job_.config.quiet || !losses.empty()) {
      std::fprintf(stderr, "commlens: %zu ranks profiled -> %s%s%s\n", result.merged_ranks.size(),
                   result.output_path.c_str(), losses.empty() ? "" : "; WARNING: ", losses.c_str());
    }
    report_left_behind(result);
    if (job_.config.quiet) {
      return;
    }
    std::vector<RanksLeftBehind> sent; // by folder, the ranks whose data came over MPI
    for (const RanksLeftBehind& folder : remote_) {
      RanksLeftBehind& merged = sent.emplace_back(RanksLeftBehind{{}, folder.place});
      std::ranges::copy_if(folder.ranks, std::back_inserter(merged.ranks),
                           [&](int rank) { return std::ranges::binary_search(result.merged_ranks, rank); });
      if (merged.ranks.empty()) {
        sent.pop_back();
      }
    }
    if (sent.size() <= kFoldersNamed) {
      for (const RanksLeftBehind& folder : sent) {
        std::fprintf(stderr,
                     "commlens: ranks %s wrote into %s, which rank 0 cannot see: their data came over MPI\n",
                     describe_ranks(folder.ranks).c_str(), folder.place.c_str());
      }
    } else {
      std::fprintf(stderr,
                   "commlens: ranks %s wrote into %zu folders that rank 0 cannot see (%s and others): their "
                   "data came over MPI\n",
                   describe_ranks(ranks_in(sent)).c_str(), sent.size(), sent.front().place.c_str());
    }
  }

  // Where the files of the ranks missing from the database stay, so that `commlens merge` can take
  // them once they are brought together.
  static void report_left_behind(const MergeResult& result) {
    for (std::size_t folder = 0; folder < result.left_behind.size() && folder < kFoldersNamed; ++folder) {
      std::fprintf(
          stderr, "commlens: warning: ranks %s are not in the merged database; their rank files stay in %s\n",
          describe_ranks(result.left_behind[folder].ranks).c_str(), result.left_behind[folder].place.c_str());
    }
    if (result.left_behind.size() > kFoldersNamed) {
      std::fprintf(
          stderr,
          "commlens: warning: and the rank files of %zu more folders stay where they were written "
          "(ranks %s)\n",
          result.left_behind.size() - kFoldersNamed,
          describe_ranks(ranks_in({result.left_behind.begin() + kFoldersNamed, result.left_behind.end()}))
              .c_str());
    }
    std::vector<int> placed = ranks_in(result.left_behind);
    std::ranges::sort(placed);
    std::vector<int> unplaced;
    std::ranges::copy_if(result.missing_ranks, std::back_inserter(unplaced),
                         [&](int rank) { return !std::ranges::binary_search(placed, rank); });
    if (!unplaced.empty()) {
      std::fprintf(stderr, "commlens: warning: no rank file for ranks %s\n",
                   describe_ranks(unplaced).c_str());
    }
  }

  void clean_up(bool complete) const {
    for (const std::string& path : temporary_) {
      std::remove(path.c_str());
    }
    if (!complete || job_.config.keep_rank_files) {
      return;
    }
    for (const int rank : sources_.ranks) {
      remove_rank_file(in_folder(rank_database_name(rank)));
    }
    // Rank 0's registry goes with the merged database's folder; another folder's goes here.
    if (!rank0_folder_ || index_ == 0) {
      std::error_code ignored;
      fs::remove(in_folder(kJobRegistryName), ignored);
    }
  }

  const TreeMergeJob& job_;
  MPI_Comm leaders_;
  int index_ = 0;
  int size_ = 1;
  bool rank0_folder_;
  MergeSources sources_;
  std::vector<RanksLeftBehind> subtree_; // every rank of this leader's subtree, with its folder
  std::vector<RanksLeftBehind> remote_;  // of those, the ranks in folders rank 0 cannot see
  std::vector<std::string> temporary_;   // parts made or received here
};

// Whether this leader's folder is rank 0's: it holds rank 0, or as COMMLENS_SHARED_OUTPUT says, or
// (auto) the file rank 0 just closed is there as rank 0 sees it.
bool folder_is_rank0s(const TreeMergeJob& job, bool holds_rank0, const Fingerprint& rank0_file) {
  if (holds_rank0) {
    return true;
  }
  switch (job.config.shared_output) {
  case SharedOutput::Yes:
    return true;
  case SharedOutput::No:
    return false;
  case SharedOutput::Auto:
    break;
  }
  return rank0_file[0] != 0 &&
         fingerprint((fs::path(job.config.output_directory) / rank_database_name(0)).string()) == rank0_file;
}

} // namespace

void merge_job_as_tree(const TreeMergeJob& job) {
  const FinalizeTopology& topology = job.topology;
  Fingerprint rank0_file{};
  if (topology.world_rank() == 0) {
    rank0_file = fingerprint((fs::path(job.config.output_directory) / rank_database_name(0)).string());
  }
  PMPI_Bcast(rank0_file.data(), static_cast<int>(rank0_file.size()), MPI_INT64_T, 0, topology.world());
  // The folder's leader learns which of its ranks kept a file (-1: not this one).
  int folder_size = 1;
  PMPI_Comm_size(topology.folder(), &folder_size);
  const int mine = job.kept_file ? job.identity.run_rank : -1;
  std::vector<int> all(static_cast<std::size_t>(folder_size));
  PMPI_Gather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, 0, topology.folder());
  bool rank0_folder = false;
  std::vector<int> ranks;
  if (topology.leads_folder()) {
    std::ranges::copy_if(all, std::back_inserter(ranks), [](int rank) { return rank >= 0; });
    rank0_folder = folder_is_rank0s(job, topology.world_rank() == 0, rank0_file);
  }
  // Rank 0's folder first: a part there is only ever handed to a leader there, in place.
  int world_size = 1;
  PMPI_Comm_size(topology.world(), &world_size);
  MPI_Comm leaders = MPI_COMM_NULL;
  PMPI_Comm_split(topology.world(), topology.leads_folder() ? 0 : MPI_UNDEFINED,
                  (rank0_folder ? 0 : world_size) + topology.world_rank(), &leaders);
  if (leaders == MPI_COMM_NULL) {
    wait_for_the_merge(topology, 0);
    return;
  }
  Leader(job, leaders, rank0_folder, ranks).run();
  PMPI_Comm_free(&leaders);
}

} // namespace commlens::pmpi
