#pragma once
// How build_report finds what is wrong: every rule family is one function that reads the database
// and the report built so far and adds the findings whose figure reaches its rule's threshold
// (finding_rules.cpp), or says in `not_analysed` what the run did not record for it.
#include "../names/communicator_names.hpp"
#include "commlens/analysis/report.hpp"
#include "wait_states.hpp"

#include <map>
#include <string>

namespace commlens::analysis::detail {

struct FindingContext {
  const Database& database;
  const Report& report;
  CommunicatorNames communicators;
  std::map<int, std::string> function_names;
  // What findings are measured against: the ranks' time from MPI_Init to MPI_Finalize (the phase's
  // span under a phase filter), summed over ranks; their time in MPI where no rank finalized.
  std::int64_t ranks_time_ns = 0;
  std::string ranks_time_base;
  // The trace's wait states (trace mode; empty otherwise), which more than one rule reads.
  std::optional<WaitStates> wait_states;

  std::string function_name(int function_id) const;
  // `time_ns` over the ranks' time (0 when there is none).
  double share_of_ranks_time(double time_ns) const;
  // The time the wait-state rules found `function_id`'s calls waiting (0 without a trace).
  std::int64_t waiting_in(int function_id) const;
};

// A finding of `rule` about `subject` that costs `cost_ns` of the ranks' time, with the rule's
// figure `measured`; the caller adds evidence, query, view and advice.
Finding make_finding(const FindingContext& context, std::string_view rule, const std::string& subject,
                     std::int64_t cost_ns, double measured);
// "1 call", "20 calls".
std::string count_of(std::uint64_t count, std::string_view noun);
// Whether `measured` reaches the threshold of `rule`.
bool reaches_threshold(std::string_view rule, double measured);

FindingsSection find_findings(const Database& database, const Report& report);

// The rule families (one file each).
void find_wait_state_problems(const FindingContext& context, FindingsSection& section);
void find_load_imbalance(const FindingContext& context, FindingsSection& section);
void find_small_message_storms(const FindingContext& context, FindingsSection& section);
void find_unexpected_queues(const FindingContext& context, FindingsSection& section);
void find_gpu_copy_problems(const FindingContext& context, FindingsSection& section);
void find_exposed_communication(const FindingContext& context, FindingsSection& section);
void find_churn(const FindingContext& context, FindingsSection& section);
void find_short_run(const FindingContext& context, FindingsSection& section);
void find_runtime_savings(const FindingContext& context, FindingsSection& section);
void find_profiler_cost(const FindingContext& context, FindingsSection& section);

} // namespace commlens::analysis::detail
