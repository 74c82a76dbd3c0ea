// Nodes that share no folder, emulated on one machine: mpirun app contexts whose ranks write into
// folders of their own (4 ranks: 0-1 in node0, 2-3 in node1; 16 ranks: four folders of four). At
// MPI_Finalize the other folders' ranks send their data over MPI, so rank 0's folder holds the
// database of every rank with exact counts (examples/ring_pingpong.c) and no folder keeps a rank
// file. Told the folders are shared when they are not (COMMLENS_SHARED_OUTPUT=yes), rank 0 names
// the folder whose ranks it could not reach, which keeps their files. A job whose last rank is
// killed (examples/fault_sigkill.c) leaves every rank's file in its node's folder, and `commlens
// merge` of the folders takes every rank with exact counts.
#include "harness/profiled_test.hpp"
#include "ring_pingpong_calls.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace commlens::integration {
namespace {

namespace fs = std::filesystem;

constexpr int kIterations = 20;

struct Shape {
  int ranks;
  std::string mode;
};

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return fmt::format("{}_ranks_{}", info.param.ranks, info.param.mode);
}

std::set<std::string> files_in(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory))
    names.insert(entry.path().filename().string());
  return names;
}

struct NodeJob {
  JobResult result;
  std::vector<fs::path> folders;
};

// `program` on shape.ranks ranks, four to a folder (two with 4 ranks), in fresh folders.
NodeJob run_in_node_folders(const std::string& program, const Shape& shape,
                            const std::map<std::string, std::string>& environment = {}) {
  std::string base = (fs::temp_directory_path() / "commlens-node-folders-XXXXXX").string();
  if (mkdtemp(base.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed for " + base);
  NodeJob job;
  const int nodes = shape.ranks == 4 ? 2 : shape.ranks / 4;
  for (int node = 0; node < nodes; ++node)
    job.folders.push_back(fs::path(base) / fmt::format("node{}", node));
  job.result = run_profiled_job({.command = {example_program(program), std::to_string(kIterations)},
                                 .mode = shape.mode,
                                 .environment = environment,
                                 .timeout_seconds = 240,
                                 .ranks = shape.ranks,
                                 .node_outputs = job.folders});
  return job;
}

// "host:/folder", as rank 0 names a folder.
std::string place_of(const fs::path& folder) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + folder.string();
}

class NodeFolders : public ::testing::TestWithParam<Shape> {
protected:
  const NodeJob& run() const {
    static std::map<std::pair<int, std::string>, NodeJob> cache;
    const auto key = std::make_pair(GetParam().ranks, GetParam().mode);
    if (!cache.contains(key))
      cache.emplace(key, run_in_node_folders("ring_pingpong", GetParam()));
    return cache.at(key);
  }
};

TEST_P(NodeFolders, RankZerosDatabaseHoldsEveryRankWithExactCounts) {
  const NodeJob& job = run();
  ASSERT_EQ(job.result.exit_code, 0) << job.result.describe();
  const Database db(job.result.merged_database());
  EXPECT_EQ(db.integrity(), "ok");
  const CallTable expected = ring_pingpong_calls(GetParam().ranks, kIterations);
  // An MPI_ANY_SOURCE receive may be stored under the rank it matched (ring_pingpong_test.cpp).
  const auto any_source_as_minus_three = [](const CallTable& table) {
    return table.transformed([](CallKey& key) {
      if (key.rank == 0 && key.function == "MPI_Recv" &&
          key.size_bin == size_bin(ring_pingpong::kGatherBytes))
        key.peer = kAnySourcePeer;
    });
  };
  EXPECT_EQ(difference(expected, any_source_as_minus_three(read_call_stats(db, expected.functions()))), "");
  if (GetParam().mode == "trace") {
    EXPECT_EQ(difference(expected, any_source_as_minus_three(read_traced_calls(db, expected.functions()))),
              "");
    // Every rank encoded its pages and the merge copied them, wherever they were written.
    expect_every_rank_encoded_its_pages(job.result, db, GetParam().ranks);
  }
  EXPECT_EQ(db.query("SELECT value FROM run WHERE key = 'missing_ranks'").at(0).at(0).text, "");
}

TEST_P(NodeFolders, NoFolderKeepsARankFileOrAPart) {
  const NodeJob& job = run();
  ASSERT_EQ(job.result.exit_code, 0) << job.result.describe();
  EXPECT_EQ(files_in(job.folders.front()), std::set<std::string>{"commlens.sqlite"});
  for (std::size_t node = 1; node < job.folders.size(); ++node)
    EXPECT_EQ(files_in(job.folders[node]), std::set<std::string>{}) << job.folders[node];
}

TEST_P(NodeFolders, RankZeroSaysWhichFoldersSentTheirDataOverMpi) {
  const NodeJob& job = run();
  const std::string& said = job.result.standard_error;
  EXPECT_NE(said.find(fmt::format("commlens: {} ranks profiled -> {}\n", GetParam().ranks,
                                  job.result.merged_database().string())),
            std::string::npos)
      << said;
  const int per_folder = GetParam().ranks / static_cast<int>(job.folders.size());
  for (std::size_t node = 1; node < job.folders.size(); ++node) {
    const int first = static_cast<int>(node) * per_folder;
    EXPECT_NE(
        said.find(fmt::format("commlens: ranks {}-{} wrote into {}, which rank 0 cannot see: their data "
                              "came over MPI\n",
                              first, first + per_folder - 1, place_of(job.folders[node]))),
        std::string::npos)
        << said;
  }
  EXPECT_EQ(said.find("data lost"), std::string::npos) << said;
}

INSTANTIATE_TEST_SUITE_P(Shapes, NodeFolders,
                         ::testing::Values(Shape{4, "summary"}, Shape{4, "trace"}, Shape{16, "summary"},
                                           Shape{16, "trace"}),
                         shape_name);

TEST(NodeFoldersSaidShared, RankZeroNamesTheFolderOfTheRanksItCouldNotReach) {
  const NodeJob job =
      run_in_node_folders("ring_pingpong", {4, "summary"}, {{"COMMLENS_SHARED_OUTPUT", "yes"}});
  ASSERT_EQ(job.result.exit_code, 0) << job.result.describe();
  EXPECT_NE(job.result.standard_error.find(
                fmt::format("commlens: warning: ranks 2-3 are not in the merged database; their rank files "
                            "stay in {}\n",
                            place_of(job.folders[1]))),
            std::string::npos)
      << job.result.standard_error;
  EXPECT_NE(job.result.standard_error.find("WARNING: data lost: 2 of 4 ranks missing"), std::string::npos)
      << job.result.standard_error;
  EXPECT_EQ(files_in(job.folders[1]),
            (std::set<std::string>{"commlens-jobs", "rank-00002.sqlite", "rank-00003.sqlite"}));
}

// Every rank's calls before the fault (examples/fault_common.h).
CallTable calls_before_fault(int ranks) {
  CallTable table;
  for (int rank = 0; rank < ranks; ++rank) {
    table.add(rank, "MPI_Allreduce", kWorld, kNoPeer, 32 * 4, 32 * 4, kIterations);
    table.add(rank, "MPI_Barrier", kWorld, kNoPeer, 0, 0, kIterations);
  }
  return table;
}

class KilledNodeFolders : public ::testing::TestWithParam<Shape> {};

TEST_P(KilledNodeFolders, MergingTheFoldersTakesEverySurvivingRankWithExactCounts) {
  const NodeJob job = run_in_node_folders("fault_sigkill", GetParam());
  ASSERT_NE(job.result.exit_code, 0) << job.result.describe();
  ASSERT_NE(job.result.exit_code, 124) << "the job hung until the timeout\n" << job.result.describe();
  const fs::path merged = job.folders.front().parent_path() / "merged.sqlite";
  std::string command = std::string(COMMLENS_TEST_CLI) + " merge";
  for (const fs::path& folder : job.folders)
    command += " " + folder.string();
  command += " -o " + merged.string() + " > " + merged.string() + ".log 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0)
      << command << "\n"
      << (std::ostringstream() << std::ifstream(merged.string() + ".log").rdbuf()).str();
  const Database db(merged);
  EXPECT_EQ(db.integrity(), "ok");
  const CallTable expected = calls_before_fault(GetParam().ranks);
  EXPECT_EQ(difference(expected, read_call_stats(db, expected.functions())), "");
  if (GetParam().mode == "trace") {
    EXPECT_EQ(difference(expected, read_traced_calls(db, expected.functions())), "");
  }
  EXPECT_EQ(db.query("SELECT value FROM run WHERE key = 'merged_ranks'").at(0).at(0).text,
            std::to_string(GetParam().ranks));
  // A merge that took every rank removes the rank files and the folders' job registries.
  for (const fs::path& folder : job.folders)
    EXPECT_EQ(files_in(folder), std::set<std::string>{}) << folder;
}

INSTANTIATE_TEST_SUITE_P(Shapes, KilledNodeFolders,
                         ::testing::Values(Shape{4, "summary"}, Shape{4, "trace"}, Shape{16, "summary"},
                                           Shape{16, "trace"}),
                         shape_name);

} // namespace
} // namespace commlens::integration
