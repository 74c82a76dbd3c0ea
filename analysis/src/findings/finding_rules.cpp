// The rules: what each measures, its threshold and what it needs recorded. docs/findings.md explains
// each; thresholds are tuned so that the example programs built to show a pattern show it and the
// others show nothing (tests/integration/finding_patterns_test.cpp).
#include "commlens/analysis/findings.hpp"

#include <stdexcept>

namespace commlens::analysis {
namespace {

constexpr std::string_view kTraceMode = "commlens run --mode trace";

} // namespace

const std::vector<FindingRule>& finding_rules() {
  static const std::vector<FindingRule> rules = {
      {"late-sender", "Late sender", "waiting time in receives, share of the ranks' time", 0.05, Unit::Share,
       "trace mode", kTraceMode},
      {"late-receiver", "Late receiver", "waiting time in blocking sends, share of the ranks' time", 0.05,
       Unit::Share, "trace mode", kTraceMode},
      {"wait-at-collective", "Wait at collective",
       "waiting time at collective entry, share of the ranks' time", 0.05, Unit::Share, "trace mode",
       kTraceMode},
      {"load-imbalance", "Load imbalance",
       "time the ranks lose waiting for the slowest one's work outside MPI (at least 10 ms per rank), share "
       "of the ranks' time in the phase",
       0.05, Unit::Share, "", ""},
      {"small-messages", "Small-message storm",
       "time in calls moving less than 1 KiB (at least 1000 per rank), less their waits, share of the "
       "ranks' time",
       0.02, Unit::Share, "", ""},
      {"unexpected-queue", "Unexpected-queue build-up", "largest unexpected-message queue, messages", 32,
       Unit::Count, "the MPI_T collector and an MPI library with queue-length pvars",
       "COMMLENS_COLLECTORS=all with Open MPI or MPICH"},
      {"pageable-staging", "Pageable host staging",
       "time in copies between a GPU and pageable host memory, share of the ranks' time", 0.01, Unit::Share,
       "the CUDA collectors", "run on a GPU with COMMLENS_COLLECTORS=all"},
      {"host-staged-copies", "Host-staged copies between GPUs of one host",
       "time in host-staged copies made by MPI or NCCL calls on hosts with several GPU ranks, share of the "
       "ranks' time",
       0.01, Unit::Share, "the CUDA collectors and trace mode",
       "run on GPUs with COMMLENS_COLLECTORS=all and --mode trace"},
      {"exposed-communication", "Communication not overlapped with compute",
       "communication time per step not hidden behind compute, share of the median step", 0.10, Unit::Share,
       "training steps", "MPI_Pcontrol(2) at the start of each step"},
      {"communicator-churn", "Communicator churn",
       "communicators created per rank and step (per rank in a run without steps: at least 100)", 1,
       Unit::Count, "", ""},
      {"datatype-churn", "Datatype churn",
       "datatypes committed per rank and step (per rank in a run without steps: at least 100)", 1,
       Unit::Count, "", ""},
      {"startup-teardown", "Start-up and tear-down dominate",
       "time in MPI_Init and MPI_Finalize, share of the ranks' time", 0.5, Unit::Share, "", ""},
      {"runtime-saves", "The GPU runtime would save time",
       "time the runtime would save over its baseline, share of the ranks' time", 0.01, Unit::Share,
       "an A/B run of the GPU runtime", "COMMLENS_RUNTIME=ab in trace mode"},
      {"runtime-slower", "The GPU runtime is slower than its baseline",
       "time the runtime loses against its baseline, share of the ranks' time", 0.01, Unit::Share,
       "an A/B run of the GPU runtime", "COMMLENS_RUNTIME=ab in trace mode"},
      {"profiler-cost", "The profiler slows the steps",
       "commlens's own time per step on the threads that copy, share of the median step", 0.01, Unit::Share,
       "training steps, copies taken from the CUDA runtime's calls",
       "mark the steps in a program that calls a shared libcudart (PyTorch)"},
  };
  return rules;
}

const FindingRule& finding_rule(std::string_view rule) {
  for (const auto& known : finding_rules())
    if (known.rule == rule)
      return known;
  throw std::out_of_range("no finding rule named " + std::string(rule));
}

} // namespace commlens::analysis
