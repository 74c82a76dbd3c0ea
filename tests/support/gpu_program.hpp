#pragma once
// What the GPU tests share: profiling one program of examples/cuda (two ranks, trace mode, every
// collector on), skipping with a message naming what was skipped when the GPUs are missing, and
// the stored copies summed per rank and path.
#include "gpu_probe.hpp"
#include "harness/database.hpp"
#include "harness/job.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <regex>

namespace commlens::integration {

inline constexpr int kRanksOnGpus = 2;
inline constexpr int kIterations = 20;
inline constexpr std::int64_t kBytes = 1 << 20;
inline constexpr std::int64_t kReduceBytes = 256 * 4; // examples/cuda/device_reduce.hpp

inline std::string cuda_example(const std::string& name) {
  return (std::filesystem::path(COMMLENS_CUDA_EXAMPLES_DIR) / name).string();
}

struct PathTotals {
  std::int64_t copies = 0, bytes = 0;
  bool operator==(const PathTotals&) const = default;
};
inline std::ostream& operator<<(std::ostream& out, const PathTotals& t) {
  return out << t.copies << " copies, " << t.bytes << " B";
}

using CopiesPerPath = std::map<std::pair<int, std::string>, PathTotals>; // (rank, path) -> totals

inline CopiesPerPath copies_per_path(const Database& db) {
  CopiesPerPath totals;
  for (const Row& row :
       db.query("SELECT rank, path, sum(copies), sum(bytes) FROM cuda_copies GROUP BY rank, path")) {
    totals[{static_cast<int>(row[0].as_int()), *row[1].text}] = {row[2].as_int(), row[3].as_int()};
  }
  return totals;
}

// Totals of one rank and path; zero when there is no such row (shown as such by a failing check).
inline PathTotals totals_of(const CopiesPerPath& totals, int rank, const std::string& path) {
  const auto found = totals.find({rank, path});
  return found != totals.end() ? found->second : PathTotals{};
}

class GpuProgram : public ::testing::Test {
protected:
  // Skips (see SKIP_WITHOUT_GPUS) unless the machine has `gpus` GPUs; else runs the program profiled
  // and prints its copies per rank and path.
  std::unique_ptr<Database> profile(const std::string& what, int gpus, std::vector<std::string> command) {
    if (cuda_tests::gpu_count() < gpus) {
      skipped_ = true;
      return nullptr;
    }
    result_ = run_profiled_job({.command = std::move(command),
                                .mode = mode_,
                                .environment = collection(),
                                .timeout_seconds = 240,
                                .ranks = kRanksOnGpus});
    EXPECT_EQ(result_.exit_code, 0) << what << ": " << result_.describe();
    if (result_.exit_code != 0) {
      return nullptr;
    }
    auto db = std::make_unique<Database>(result_.merged_database());
    EXPECT_EQ(db->scalar("SELECT count(*) FROM run WHERE key = 'cuda_collectors' AND value = 'on'"), 1)
        << what << ": " << result_.describe();
    EXPECT_EQ(db->scalar("SELECT count(*) FROM run WHERE key = 'cuda_copies_source' AND value LIKE '" +
                         std::string(copies_from_calls_ ? "calls" : "cupti") + "%'"),
              1)
        << what << ": " << result_.describe();
    for (const auto& [key, totals] : copies_per_path(*db)) {
      std::cout << what << ": rank " << key.first << " path " << key.second << ": " << totals << "\n";
    }
    return db;
  }
  // An examples/cuda program with the usual arguments: kIterations, kBytes, then `extra`.
  std::unique_ptr<Database> profile_example(const std::string& what, const std::string& program, int gpus,
                                            std::vector<std::string> extra = {}) {
    std::vector<std::string> command{cuda_example(program), std::to_string(kIterations),
                                     std::to_string(kBytes)};
    command.insert(command.end(), extra.begin(), extra.end());
    return profile(what, gpus, std::move(command));
  }
  // The "rank R op_invocations K" lines of the programs that use device_reduce.hpp.
  std::map<int, std::int64_t> op_invocations() const {
    std::map<int, std::int64_t> found;
    const std::regex line(R"(rank (\d+) op_invocations (\d+))");
    const std::string& out = result_.standard_output;
    for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
      found[std::stoi((*it)[1])] = std::stoll((*it)[2]);
    }
    return found;
  }
  // The next profile takes copies from the CUDA runtime's calls (COMMLENS_CUDA_COPIES=calls, no
  // kernel records), as a program calling a shared libcudart is profiled by default.
  void take_copies_from_calls() { copies_from_calls_ = true; }
  // The next profile in summary mode (the default), not trace mode.
  void profile_in_summary_mode() { mode_ = "summary"; }
  // Otherwise every kernel, memset and synchronisation too: what these programs queue is the subject.
  std::map<std::string, std::string> collection() const {
    if (copies_from_calls_) {
      return {{"COMMLENS_COLLECTORS", "all"}, {"COMMLENS_CUDA_COPIES", "calls"}};
    }
    return {{"COMMLENS_COLLECTORS", "all"}, {"COMMLENS_KERNELS", "all"}};
  }
  bool skipped_ = false;
  JobResult result_;
  bool copies_from_calls_ = false;
  std::string mode_ = "trace";
};

#define SKIP_WITHOUT_GPUS(db, gpus, what)                                                                    \
  if (skipped_) {                                                                                            \
    GTEST_SKIP() << (cuda_tests::gpu_count() == 0 ? "no CUDA device: skipped "                               \
                                                  : "fewer than " #gpus " GPUs: skipped ")                   \
                 << what;                                                                                    \
  }                                                                                                          \
  ASSERT_TRUE(db)

// Rows of `table` on `rank` made inside MPI calls of `function` (by mpi_call_id, within the call's
// start and end on the merged timeline) and matching `condition`.
inline std::int64_t rows_inside(const Database& db, const std::string& table, const std::string& function,
                                int rank, const std::string& condition = "1") {
  return db.scalar("SELECT count(*) FROM " + table +
                   " c JOIN mpi_calls m ON m.id = c.mpi_call_id JOIN functions f ON f.id = m.function_id "
                   "WHERE f.name = '" +
                   function + "' AND m.rank = c.rank AND c.start_ns >= m.start_ns AND c.end_ns <= m.end_ns " +
                   "AND c.rank = " + std::to_string(rank) + " AND " + condition);
}

// A suite whose tests all read one profiled run: Suite::run_profile() (returning the database, or
// null after a skip) runs at the first test's SetUp, and every test then skips alike.
template <typename Suite> class ProfiledOnce : public GpuProgram {
protected:
  void SetUp() override {
    if (!profiled_) {
      db_ = static_cast<Suite*>(this)->run_profile();
      no_gpu_ = skipped_;
      profiled_ = true;
    }
    skipped_ = no_gpu_;
  }
  static void TearDownTestSuite() { db_.reset(); }
  static inline bool profiled_ = false;
  static inline bool no_gpu_ = false;
  static inline std::unique_ptr<Database> db_;
};

} // namespace commlens::integration
