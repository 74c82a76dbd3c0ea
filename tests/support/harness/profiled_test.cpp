#include "profiled_test.hpp"

#include <map>
#include <string>
#include <tuple>

namespace commlens::integration {

const JobResult& ProfiledExample::job(JobSpec spec) const {
  using Key = std::tuple<std::vector<std::string>, std::map<std::string, std::string>, int, std::string>;
  static std::map<Key, JobResult> cache;
  const Key key{spec.command, spec.environment, spec.ranks, GetParam()};
  auto found = cache.find(key);
  if (found == cache.end()) {
    spec.mode = GetParam();
    found = cache.emplace(key, run_profiled_job(spec)).first;
  }
  return found->second;
}

std::unique_ptr<Database> ProfiledExample::merged(const JobResult& result) const {
  EXPECT_EQ(result.exit_code, 0) << result.describe();
  try {
    return std::make_unique<Database>(result.merged_database());
  } catch (const std::exception& error) {
    ADD_FAILURE() << error.what() << "\n" << result.describe();
    return nullptr;
  }
}

void ProfiledExample::expect_calls(const Database& db, const CallTable& expected,
                                   const std::function<CallTable(const CallTable&)>& normalise) const {
  const auto shape = [&](const CallTable& table) { return normalise ? normalise(table) : table; };
  const auto functions = expected.functions();
  EXPECT_EQ(difference(expected, shape(read_call_stats(db, functions))), "")
      << "call_stats differs from the documented pattern (" << GetParam() << " mode)";
  if (trace()) {
    EXPECT_EQ(difference(expected, shape(read_traced_calls(db, functions))), "")
        << "mpi_calls differs from the documented pattern";
    EXPECT_EQ(count_difference(read_call_stats(db), read_traced_calls(db)), "")
        << "call_stats and mpi_calls disagree on how many calls each rank made (left: call_stats)";
  } else {
    EXPECT_EQ(db.scalar("SELECT count(*) FROM mpi_calls"), 0) << "summary mode must not store mpi_calls";
  }
}

void ProfiledExample::expect_trace_pages_of_every_rank(const JobResult& result, int ranks) const {
  if (!trace())
    GTEST_SKIP() << "summary mode has no trace pages";
  if (auto db = merged(result))
    expect_every_rank_encoded_its_pages(result, *db, ranks);
}

std::string mode_test_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

void expect_every_rank_encoded_its_pages(const JobResult& result, const Database& db, int ranks) {
  EXPECT_EQ(result.standard_error.find("were not encoded"), std::string::npos) << result.standard_error;
  std::string all;
  for (int rank = 0; rank < ranks; ++rank)
    all += (rank == 0 ? "" : ",") + std::to_string(rank);
  EXPECT_EQ(db.query("SELECT value FROM run WHERE key = 'trace_pages_ranks'").at(0).at(0).text, all);
}

} // namespace commlens::integration
