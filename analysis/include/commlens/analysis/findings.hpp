#pragma once
// Findings: what is wrong in a run, ranked by what it costs, each with its evidence, where to see it
// and what to try. A finding comes from a rule (late sender, load imbalance, small-message storm,
// ...) that fires only when its measured figure reaches the rule's threshold. Its id, the rule and
// what it is about ("late-sender@MPI_COMM_WORLD"), is stable from run to run, so that `commlens
// check` can fail CI on a new finding or a grown one. docs/findings.md describes every rule.
#include "commlens/analysis/units.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::analysis {

// Where the timeline shows a finding's evidence: a span of the trace on the database's clock (the
// longest wait, the phase or step that lost the most; start_ns == end_ns: the whole run), the ranks
// it is about, the first the one to look at (empty: every rank), and the function whose calls it
// names (empty: none).
struct TimelinePlace {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::vector<int> ranks;
  std::string function;
};

struct Finding {
  std::string id;    // "<rule>@<subject>": "late-sender@MPI_COMM_WORLD", "load-imbalance@phase-2"
  std::string rule;  // "late-sender"
  std::string title; // one sentence saying what is wrong
  // What it costs: time summed over ranks, and its share of the time it is measured against
  // (`cost_base`: "the ranks' time" from MPI_Init to MPI_Finalize, "the steps' time").
  std::int64_t cost_ns = 0;
  double cost_share = 0;
  std::string cost_base;
  // The figure the rule's threshold applies to, in `unit`, and that threshold.
  std::string measure; // "waiting time, share of the ranks' time"
  double measured = 0;
  double threshold = 0;
  Unit unit = Unit::Share;
  std::vector<std::string> evidence;     // ranks, calls, communicators, phases, one line each
  std::string query;                     // SQL that lists what the finding is made of
  std::string view;                      // where commlens-viewer shows it
  std::optional<TimelinePlace> timeline; // unset where the evidence is no place in the trace
  std::string advice;                    // what to try
};

// A rule as docs/findings.md and `commlens report` state it.
struct FindingRule {
  std::string_view rule;    // "late-sender"
  std::string_view name;    // "Late sender"
  std::string_view measure; // what the threshold applies to
  double threshold = 0;     // in `unit`
  Unit unit = Unit::Share;  //
  std::string_view needs;   // what the run must record: "trace mode", "the MPI_T collector", ...
  std::string_view how_to_record;
};

// Every rule, in the order docs/findings.md lists them.
const std::vector<FindingRule>& finding_rules();
// The rule named `rule`; throws std::out_of_range for a name no rule has.
const FindingRule& finding_rule(std::string_view rule);

struct FindingsSection {
  std::vector<Finding> findings; // most cost first
  // Rules this database lacks the data for, with how to record it ("late sender, late receiver,
  // wait at collectives: needs trace mode (commlens run --mode trace)"), one line each.
  std::vector<std::string> not_analysed;
};

} // namespace commlens::analysis
