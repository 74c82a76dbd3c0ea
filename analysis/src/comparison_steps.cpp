// `commlens compare A B` of two training runs: the training-steps figures side by side, per step and
// rank, so that fusion thresholds, gradient modes or the GPU runtime can be told apart by what one
// step costs and what it sends.
#include "commlens/analysis/comparison.hpp"
#include "commlens/analysis/report.hpp"

#include <map>
#include <set>
#include <tuple>

namespace commlens::analysis {
namespace {

// Figure names with their units in display order: the step summary, then each function of either
// run, then the collective size bins of either run.
std::vector<std::pair<std::string, std::string>> figure_order(const TrainingSteps& a,
                                                              const TrainingSteps& b) {
  std::vector<std::pair<std::string, std::string>> order = {
      {"steps", "steps"},
      {"median step time", "ns"},
      {"step time, first quartile", "ns"},
      {"step time, third quartile", "ns"},
      {"median time in MPI and NCCL calls per step", "ns"},
      {"share of step time in MPI and NCCL calls", "share"}};
  if (a.median_nccl_gpu_ns > 0 || b.median_nccl_gpu_ns > 0)
    order.emplace_back("median NCCL time on the GPU", "ns");
  if (!a.gpu_steps.empty() || !b.gpu_steps.empty())
    for (const char* figure :
         {"median GPU compute", "median GPU communication", "median exposed communication"})
      order.emplace_back(figure, "ns");
  if (a.nonblocking_allreduce || b.nonblocking_allreduce) {
    order.emplace_back("nonblocking allreduces pending", "ns");
    order.emplace_back("pending outside MPI calls", "ns");
  }
  std::set<std::string> seen;
  for (const auto* steps : {&a, &b})
    for (const auto& function : steps->functions)
      if (seen.insert(function.name).second)
        for (const auto& [suffix, unit] : {std::pair{" calls", "calls"},
                                           {" bytes sent", "bytes"},
                                           {" bytes received", "bytes"},
                                           {" time", "ns"}})
          order.emplace_back(function.name + suffix, unit);
  std::set<std::tuple<std::string, int, std::string>> bins; // function, size bin (by size), key
  for (const auto* steps : {&a, &b})
    for (const auto& bin : steps->collective_sizes)
      bins.emplace(bin.function, bin.size_bin, bin.key);
  for (const auto& [function, size_bin, key] : bins)
    order.emplace_back(function + " " + key + " calls", "calls");
  return order;
}

std::map<std::string, double> figures_of(const TrainingSteps& steps) {
  std::map<std::string, double> figures = {
      {"steps", double(steps.steps.size())},
      {"median step time", double(steps.median_ns)},
      {"step time, first quartile", double(steps.p25_ns)},
      {"step time, third quartile", double(steps.p75_ns)},
      {"median time in MPI and NCCL calls per step", double(steps.median_mpi_ns)},
      {"share of step time in MPI and NCCL calls", steps.mpi_share}};
  if (steps.median_nccl_gpu_ns > 0)
    figures["median NCCL time on the GPU"] = double(steps.median_nccl_gpu_ns);
  if (!steps.gpu_steps.empty()) {
    figures["median GPU compute"] = double(steps.median_gpu_compute_ns);
    figures["median GPU communication"] = double(steps.median_gpu_communication_ns);
    figures["median exposed communication"] = double(steps.median_gpu_exposed_ns);
  }
  if (steps.nonblocking_allreduce) {
    figures["nonblocking allreduces pending"] = steps.in_flight_ns;
    figures["pending outside MPI calls"] = steps.in_flight_outside_mpi_ns;
  }
  for (const auto& function : steps.functions) {
    figures[function.name + " calls"] = function.calls_per_step;
    figures[function.name + " bytes sent"] = function.bytes_sent_per_step;
    figures[function.name + " bytes received"] = function.bytes_recv_per_step;
    figures[function.name + " time"] = function.time_per_step_ns;
  }
  for (const auto& bin : steps.collective_sizes)
    figures[bin.function + " " + bin.key + " calls"] = bin.calls_per_step;
  return figures;
}

} // namespace

void compare_training_steps(const Database& a, const Database& b, Comparison& comparison) {
  const auto steps_a = query_training_steps(a, {});
  const auto steps_b = query_training_steps(b, {});
  if (!steps_a.absent.empty() || !steps_b.absent.empty()) {
    if (steps_a.absent.empty() != steps_b.absent.empty())
      comparison.steps_note = steps_a.absent.empty() ? "B has no training steps" : "A has no training steps";
    return;
  }
  const auto figures_a = figures_of(steps_a);
  const auto figures_b = figures_of(steps_b);
  const auto value = [](const std::map<std::string, double>& figures, const std::string& name) {
    const auto found = figures.find(name);
    return found == figures.end() ? 0.0 : found->second;
  };
  for (const auto& [name, unit] : figure_order(steps_a, steps_b)) {
    ComparedStepFigure figure{name, unit, value(figures_a, name), value(figures_b, name), std::nullopt};
    if (figure.a != 0)
      figure.ratio = figure.b / figure.a;
    comparison.steps.push_back(std::move(figure));
  }
}

} // namespace commlens::analysis
