// Communicator and datatype churn: communicators created (and freed) or datatypes committed again
// and again, per training step, or by the hundred in a run without steps. Each communicator
// creation is a collective that agrees on a context id (NCCL's initialisation takes far longer);
// each commit flattens and optimises the type again.
#include "commlens/analysis/report_format.hpp"
#include "findings_engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace commlens::analysis::detail {
namespace {

constexpr double kPerRankWithoutSteps = 100;

struct Churn {
  std::string_view rule;
  std::string_view title;        // "Communicators are created again and again"
  std::string_view what;         // "communicators created", "datatypes committed"
  std::set<std::string> counted; // the calls that make one
  std::set<std::string> undoing; // the other calls whose time it costs: freeing, building the type
  std::string_view advice;

  bool costs(const std::string& function) const {
    return counted.contains(function) || undoing.contains(function);
  }
};

const std::vector<Churn>& churns() {
  static const std::vector<Churn> kinds = {
      {"communicator-churn",
       "Communicators are created again and again",
       "communicators created",
       {"MPI_Comm_dup",
        "MPI_Comm_dup_with_info",
        "MPI_Comm_idup",
        "MPI_Comm_idup_with_info",
        "MPI_Comm_split",
        "MPI_Comm_split_type",
        "MPI_Comm_create",
        "MPI_Comm_create_group",
        "MPI_Comm_create_from_group",
        "MPI_Cart_create",
        "MPI_Cart_sub",
        "MPI_Graph_create",
        "MPI_Dist_graph_create",
        "MPI_Dist_graph_create_adjacent",
        "MPI_Intercomm_create",
        "MPI_Intercomm_merge",
        "nccl:CommInitRank",
        "nccl:CommInitRankConfig",
        "nccl:CommInitAll",
        "nccl:CommSplit"},
       {"MPI_Comm_free", "MPI_Comm_disconnect", "nccl:CommDestroy", "nccl:CommAbort", "nccl:CommFinalize"},
       "Create communicators once, before the loop, and reuse them: every creation is a collective over the "
       "parent, and freeing and creating again repeats it."},
      {"datatype-churn",
       "Datatypes are committed again and again",
       "datatypes committed",
       {"MPI_Type_commit"},
       {"MPI_Type_free", "MPI_Type_contiguous", "MPI_Type_vector", "MPI_Type_create_hvector",
        "MPI_Type_indexed", "MPI_Type_create_hindexed", "MPI_Type_create_indexed_block",
        "MPI_Type_create_hindexed_block", "MPI_Type_create_struct", "MPI_Type_create_subarray",
        "MPI_Type_create_darray", "MPI_Type_create_resized", "MPI_Type_dup"},
       "Build and commit each derived datatype once, before the loop, and reuse it until the end."},
  };
  return kinds;
}

struct Tally {
  double made = 0;    // per rank (and step)
  double time_ns = 0; // per rank (and step)
  std::vector<std::string> by_function;
};

template <typename Functions, typename Name, typename Calls, typename Time>
Tally tally(const Churn& churn, const Functions& functions, Name name, Calls calls, Time time, double ranks) {
  Tally out;
  for (const auto& function : functions) {
    const std::string function_name = name(function);
    if (churn.counted.contains(function_name) && calls(function) > 0) {
      out.made += calls(function) / ranks;
      out.by_function.push_back(
          fmt::format("{} {}", function_name, format_value(calls(function) / ranks, Unit::Count)));
    }
    if (churn.costs(function_name))
      out.time_ns += time(function) / ranks;
  }
  return out;
}

void add(const FindingContext& context, const Churn& churn, const Tally& tally, double cost_ns, bool per_step,
         FindingsSection& section) {
  const double threshold = per_step ? finding_rule(churn.rule).threshold : kPerRankWithoutSteps;
  if (tally.made < threshold)
    return;
  auto finding = make_finding(context, churn.rule, per_step ? "steps" : "run",
                              static_cast<std::int64_t>(cost_ns), tally.made);
  finding.threshold = threshold;
  finding.measure = per_step ? fmt::format("{} per rank and step", churn.what)
                             : fmt::format("{} per rank in a run without training steps", churn.what);
  finding.title = fmt::format("{}: {} per rank{}, {} in their calls{}", churn.title,
                              format_value(tally.made, Unit::Count), per_step ? " and step" : "",
                              human_duration(tally.time_ns), per_step ? " per step" : "");
  finding.evidence = {fmt::format("by function, per rank{}: {}", per_step ? " and step" : "",
                                  fmt::join(tally.by_function, ", "))};
  std::vector<std::string> quoted;
  for (const auto* names : {&churn.counted, &churn.undoing})
    for (const auto& name : *names)
      quoted.push_back("'" + name + "'");
  finding.query =
      fmt::format("SELECT c.phase, f.name, SUM(c.count) AS calls, SUM(c.time_total_ns) AS time_ns FROM "
                  "call_stats c JOIN functions f ON f.id = c.function_id WHERE f.name IN ({}) GROUP BY "
                  "c.phase, f.name ORDER BY c.phase",
                  fmt::join(quoted, ", "));
  finding.view = per_step ? "Steps: the calls of each step" : "Summary: functions";
  finding.advice = churn.advice;
  section.findings.push_back(std::move(finding));
}

} // namespace

void find_churn(const FindingContext& context, FindingsSection& section) {
  const auto& report = context.report;
  const auto& steps = report.training_steps;
  const bool per_step = steps.absent.empty() && !steps.steps.empty();
  const double ranks = double(std::max<std::size_t>(report.ranks.size(), 1));
  for (const auto& churn : churns()) {
    if (per_step) {
      const auto counted = tally(
          churn, steps.functions, [](const StepFunctionStats& f) { return f.name; },
          [](const StepFunctionStats& f) { return f.calls_per_step; },
          [](const StepFunctionStats& f) { return f.time_per_step_ns; }, 1.0);
      add(context, churn, counted, counted.time_ns * steps.rank_steps, true, section);
    } else {
      const auto counted = tally(
          churn, report.functions, [](const FunctionStats& f) { return f.name; },
          [](const FunctionStats& f) { return double(f.calls); },
          [](const FunctionStats& f) { return double(f.time_total_ns); }, ranks);
      add(context, churn, counted, counted.time_ns * ranks, false, section);
    }
  }
}

} // namespace commlens::analysis::detail
