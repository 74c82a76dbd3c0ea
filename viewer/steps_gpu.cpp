#include "steps_gpu.hpp"

#include "format.hpp"
#include "palette.hpp"

#include <QCoreApplication>

#include <algorithm>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("StepsGpu", text);
}

QString step_label(std::size_t index) {
  return tr("step %1").arg(index + 1);
}

bool any_breakdown(const analysis::TrainingSteps& steps) {
  return std::any_of(steps.steps.begin(), steps.steps.end(),
                     [](const auto& step) { return step.gpu_ranks > 0; });
}

bool any_nccl_gpu_time(const analysis::TrainingSteps& steps) {
  return std::any_of(steps.steps.begin(), steps.steps.end(),
                     [](const auto& step) { return step.nccl_gpu_ns > 0; });
}

QColor exposed_color() {
  return QColor(0xe15759);
}

QColor idle_color() {
  return QColor(215, 215, 215);
}

} // namespace

std::vector<Bar> gpu_breakdown_bars(const analysis::TrainingSteps& steps) {
  std::vector<Bar> bars;
  for (std::size_t index = 0; index < steps.steps.size(); ++index) {
    const auto& step = steps.steps[index];
    if (step.gpu_ranks == 0)
      continue;
    // Compute and communication overlap: the overlapped part is drawn once, between the compute
    // that ran alone and the communication that ran alone.
    const auto compute_alone = std::max<std::int64_t>(0, step.gpu_compute_ns - step.gpu_overlapped_ns);
    bars.push_back({step_label(index),
                    {{tr("compute"), double(compute_alone), kernel_color(QStringLiteral("compute"), false)},
                     {tr("overlapped communication"), double(step.gpu_overlapped_ns), kernel_color({}, true)},
                     {tr("exposed communication"), double(step.gpu_exposed_ns), exposed_color()},
                     {tr("idle"), double(step.gpu_idle_ns), idle_color()}}});
  }
  return bars;
}

std::vector<Bar> nccl_gpu_bars(const analysis::TrainingSteps& steps) {
  std::vector<Bar> bars;
  if (!any_nccl_gpu_time(steps))
    return bars;
  for (std::size_t index = 0; index < steps.steps.size(); ++index)
    bars.push_back(
        {step_label(index),
         {{tr("NCCL calls on the GPU"), double(steps.steps[index].nccl_gpu_ns), device_span_color()}}});
  return bars;
}

QStringList gpu_table_headers(const analysis::TrainingSteps& steps) {
  if (!any_breakdown(steps) && !any_nccl_gpu_time(steps))
    return {};
  QStringList headers = {tr("GPU, mean over ranks")};
  for (std::size_t index = 0; index < steps.steps.size(); ++index)
    headers << step_label(index);
  return headers;
}

std::vector<QStringList> gpu_table_rows(const analysis::TrainingSteps& steps) {
  std::vector<QStringList> rows;
  if (gpu_table_headers(steps).isEmpty())
    return rows;
  const auto row = [&](const QString& name, bool needs_breakdown, auto figure) {
    QStringList cells = {name};
    for (const auto& step : steps.steps)
      cells << (needs_breakdown && step.gpu_ranks == 0 ? QStringLiteral("-") : format_duration(figure(step)));
    rows.push_back(cells);
  };
  using Step = analysis::TrainingStep;
  if (any_breakdown(steps)) {
    row(tr("compute"), true, [](const Step& step) { return step.gpu_compute_ns; });
    row(tr("communication"), true, [](const Step& step) { return step.gpu_communication_ns; });
    row(tr("overlapped communication"), true, [](const Step& step) { return step.gpu_overlapped_ns; });
    row(tr("exposed communication"), true, [](const Step& step) { return step.gpu_exposed_ns; });
    row(tr("idle"), true, [](const Step& step) { return step.gpu_idle_ns; });
  }
  if (any_nccl_gpu_time(steps))
    row(tr("NCCL calls on the GPU (CUDA events)"), false, [](const Step& step) { return step.nccl_gpu_ns; });
  return rows;
}

QString gpu_summary_line(const analysis::TrainingSteps& steps) {
  QStringList parts;
  if (steps.median_nccl_gpu_ns > 0)
    parts << tr("NCCL calls on the GPU %1 per step").arg(format_duration(steps.median_nccl_gpu_ns));
  if (!steps.gpu_steps.empty()) {
    const auto communication = steps.median_gpu_communication_ns;
    parts << tr("GPU in steps %1: compute %2, communication %3 (%4 % overlapped), exposed %5, idle %6")
                 .arg(QString::fromStdString(steps.gpu_steps), format_duration(steps.median_gpu_compute_ns),
                      format_duration(communication))
                 .arg(communication > 0
                          ? 100.0 * double(steps.median_gpu_overlapped_ns) / double(communication)
                          : 0.0,
                      0, 'f', 0)
                 .arg(format_duration(steps.median_gpu_exposed_ns),
                      format_duration(steps.median_gpu_idle_ns));
  } else if (!steps.gpu_absent.empty()) {
    parts << tr("GPU breakdown: %1").arg(QString::fromStdString(steps.gpu_absent).toHtmlEscaped());
  }
  // What the profiler measured of itself: its direct cost on the threads that launch the work.
  if (steps.profiler_ns_per_step > 0)
    parts << tr("commlens on the copying threads %1 per step")
                 .arg(format_duration(static_cast<std::int64_t>(steps.profiler_ns_per_step)));
  return parts.isEmpty() ? QString() : QStringLiteral("<br>") + parts.join(QStringLiteral(" &middot; "));
}

} // namespace commlens::viewer
