#pragma once
// The shape every example test shares: one profiled run per mode (cached across the tests of one
// executable), then comparisons of the stored calls with a table built from the program's pattern.
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>

#include "call_table.hpp"
#include "database.hpp"
#include "job.hpp"

namespace commlens::integration {

// Parameter of the mode-parameterised suites: "summary" or "trace".
class ProfiledExample : public ::testing::TestWithParam<std::string> {
protected:
  bool trace() const { return GetParam() == "trace"; }
  // Runs `spec` in this test's mode once for the whole executable and returns the cached result.
  const JobResult& job(JobSpec spec) const;
  const JobResult& job(const std::vector<std::string>& command) const {
    return job(JobSpec{.command = command});
  }
  // The merged database of that run; fails the test (and returns null) when the job failed.
  std::unique_ptr<Database> merged(const JobResult& result) const;
  // call_stats (and in trace mode mpi_calls) restricted to the expected functions, after `normalise`,
  // equal `expected` row for row; in trace mode both tables agree on the count of every function;
  // in summary mode mpi_calls is empty.
  void expect_calls(const Database& db, const CallTable& expected,
                    const std::function<CallTable(const CallTable&)>& normalise = nullptr) const;
  // In trace mode, expect_every_rank_encoded_its_pages on the run's database; summary mode has no
  // trace pages, so the test is skipped.
  void expect_trace_pages_of_every_rank(const JobResult& result, int ranks = kRanks) const;
};

std::string mode_test_name(const ::testing::TestParamInfo<std::string>& info);

// Every one of `ranks` ranks of a traced job encoded its own trace pages at MPI_Finalize and the
// merge copied them (run value trace_pages_ranks): none was left to the merge to decode, and no
// rank said it gave up.
void expect_every_rank_encoded_its_pages(const JobResult& result, const Database& db, int ranks = kRanks);

#define COMMLENS_IN_BOTH_MODES(suite)                                                                        \
  INSTANTIATE_TEST_SUITE_P(Modes, suite, ::testing::Values(std::string("summary"), std::string("trace")),    \
                           ::commlens::integration::mode_test_name)

} // namespace commlens::integration
