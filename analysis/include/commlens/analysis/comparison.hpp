#pragma once
// Side-by-side comparison per function and message-size bin: two databases (`commlens compare A B`)
// or two implementations inside one database (`mpi` against `runtime:<algorithm>`, from
// COMMLENS_RUNTIME=ab runs). Medians and p95 need per-call times, so they come from mpi_calls when
// every side is traced; otherwise the comparison falls back to means from call_stats and says so.
#include "commlens/analysis/database.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commlens::analysis {

struct ComparedSide {
  std::uint64_t calls = 0;
  std::int64_t time_total_ns = 0;
  std::int64_t median_ns = 0; // the mean when the comparison has no per-call times
  std::optional<std::int64_t> p95_ns{};
};

struct ComparedBin {
  std::string function{};
  int size_bin = 0;
  std::string key{}; // stable size-bin key, "2^10"
  ComparedSide a{};
  ComparedSide b{};
  std::optional<double> median_ratio{}; // b / a; empty when one side has no calls
  std::optional<double> p95_ratio{};
};

// One per-step figure of two runs that both have training steps (training_steps.hpp): step time,
// time in MPI, calls, bytes and time per step of each function, allreduce calls per size bin.
struct ComparedStepFigure {
  std::string figure; // "median step time", "MPI_Allreduce calls"
  std::string unit;   // "ns", "calls", "bytes", "share", "steps"
  double a = 0;
  double b = 0;
  std::optional<double> ratio; // b / a; empty when a is 0
};

struct Comparison {
  std::string label_a{};
  std::string label_b{};
  bool per_call_times = false;
  std::string note{};                      // why per-call times are missing, when they are
  std::vector<ComparedBin> bins{};         // by function, then size bin
  std::vector<ComparedStepFigure> steps{}; // databases compared, both with training steps
  std::string steps_note{};                // why steps is empty although a run has steps
};

Comparison compare_databases(const Database& a, const Database& b);
// Throws AnalysisError when `database` has no traced call of either implementation.
Comparison compare_implementations(const Database& database, const std::string& a, const std::string& b);
// Names of the implementations with traced calls, `mpi` first.
std::vector<std::string> traced_implementations(const Database& database);
// What an A/B run compares by default: a baseline (an `mpi:*` implementation such as
// mpi:host_staged, else `mpi`) and a `runtime:*` one, the pair sharing the most calls of one
// function and size bin (ab runs alternate the two on the same calls; `mpi` alone often holds only
// the host-buffer calls). Empty without a runtime implementation.
std::optional<std::pair<std::string, std::string>> default_implementation_pair(const Database& database);
// The per-step figures of two runs (comparison_steps.cpp); fills steps or steps_note.
void compare_training_steps(const Database& a, const Database& b, Comparison& comparison);

std::string render_comparison_text(const Comparison& comparison);
std::string render_comparison_json(const Comparison& comparison);

} // namespace commlens::analysis
