#include "steps_view.hpp"

#include "format.hpp"
#include "steps_gpu.hpp"
#include "summary_charts.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace commlens::viewer {
namespace {

constexpr int kFunctionsNamed = 5;

constexpr std::array<StepPart, kStepParts> kParts = {
    StepPart::Forward, StepPart::Backward, StepPart::Communication, StepPart::Optimizer, StepPart::Other};

// Compute parts in cool and warm colours, communication in red, the rest grey.
QColor part_color(StepPart part) {
  switch (part) {
  case StepPart::Forward:
    return QColor(0x4e79a7);
  case StepPart::Backward:
    return QColor(0xf28e2b);
  case StepPart::Communication:
    return QColor(0xe15759);
  case StepPart::Optimizer:
    return QColor(0x59a14f);
  case StepPart::Other:
    break;
  }
  return QColor(200, 200, 200);
}

std::int64_t median_ns(std::vector<double> values) {
  if (values.empty())
    return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return static_cast<std::int64_t>(*middle);
}

QStringList headers_of(const QTableWidget& table) {
  QStringList headers;
  for (int column = 0; column < table.columnCount(); ++column)
    headers << table.horizontalHeaderItem(column)->text();
  return headers;
}

QString cell_of(const QTableWidget& table, int row, int column) {
  const auto* item = table.item(row, column);
  return item ? item->text() : QString();
}

} // namespace

StepsView::StepsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::RichText);
  layout->addWidget(status_);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  auto* charts = new QSplitter(Qt::Horizontal, splitter);
  chart_ = new BarChart(charts);
  chart_->set_orientation(Qt::Vertical); // steps as columns, in the order they ran
  gpu_chart_ = new BarChart(charts);
  gpu_chart_->set_orientation(Qt::Vertical);
  charts->addWidget(chart_);
  charts->addWidget(gpu_chart_);
  tables_ = new QTabWidget(splitter);
  table_ = new QTableWidget(tables_);
  gpu_table_ = new QTableWidget(tables_);
  for (auto* table : {table_, gpu_table_}) {
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  }
  tables_->addTab(table_, tr("Steps"));
  tables_->addTab(gpu_table_, tr("GPU per step"));
  splitter->addWidget(charts);
  splitter->addWidget(tables_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter, 1);
}

void StepsView::set_database(const std::shared_ptr<const LoadedDatabase>& database) {
  for (auto* table : {table_, gpu_table_}) {
    table->clear();
    table->setRowCount(0);
    table->setColumnCount(0);
  }
  from_ranges_ = !database->range_steps.empty();
  if (from_ranges_)
    show_range_steps(*database);
  else
    show_phase_steps(*database);
  show_gpu(database->report.training_steps);
}

void StepsView::show_gpu(const analysis::TrainingSteps& steps) {
  auto breakdown = gpu_breakdown_bars(steps);
  const bool shown = !breakdown.empty() || !nccl_gpu_bars(steps).empty();
  gpu_chart_->setVisible(shown);
  tables_->setTabVisible(1, shown);
  if (!breakdown.empty())
    gpu_chart_->set_bars(tr("GPU per step, from the kernels recorded in steps %1 (mean over ranks)")
                             .arg(QString::fromStdString(steps.gpu_steps)),
                         std::move(breakdown), ValueUnit::Nanoseconds);
  else if (shown)
    gpu_chart_->set_bars(tr("NCCL calls on the GPU per step (CUDA events; kernels not recorded)"),
                         nccl_gpu_bars(steps), ValueUnit::Nanoseconds);
  fill(gpu_table_, gpu_table_headers(steps), gpu_table_rows(steps));
}

void StepsView::show_range_steps(const LoadedDatabase& database) {
  const auto& steps = database.range_steps;
  std::array<double, kStepParts> part_totals{};
  double total = 0;
  std::vector<double> durations;
  std::vector<Bar> bars;
  for (const auto& step : steps) {
    Bar bar{tr("step %1").arg(step.number), {}};
    for (const auto part : kParts) {
      part_totals[static_cast<std::size_t>(part)] += step.part(part);
      if (step.part(part) > 0)
        bar.segments.push_back({step_part_name(part), step.part(part), part_color(part)});
    }
    total += step.duration_ns;
    durations.push_back(step.duration_ns);
    bars.push_back(std::move(bar));
  }
  QStringList shares;
  for (const auto part : kParts)
    shares << tr("%1 %2 %")
                  .arg(step_part_name(part))
                  .arg(total > 0 ? 100.0 * part_totals[static_cast<std::size_t>(part)] / total : 0.0, 0, 'f',
                       1);
  status_->setText(
      tr("%1 steps on %2 ranks, from NVTX ranges (step: forward, backward, allreduce, optimizer) "
         "&middot; median step %3<br>%4")
          .arg(steps.size())
          .arg(steps.front().ranks)
          .arg(format_duration(median_ns(durations)), shares.join(QStringLiteral(", "))) +
      gpu_summary_line(database.report.training_steps));
  chart_->set_bars(tr("Time per training step, per rank (mean over ranks)"), std::move(bars),
                   ValueUnit::Nanoseconds);

  // Steps as columns: a row per part, then the step's whole time.
  QStringList headers = {tr("Part")};
  for (const auto& step : steps)
    headers << tr("step %1").arg(step.number);
  std::vector<QStringList> rows;
  for (const auto part : kParts) {
    QStringList cells = {step_part_name(part)};
    for (const auto& step : steps)
      cells << format_duration(static_cast<std::int64_t>(step.part(part)));
    rows.push_back(cells);
  }
  QStringList whole = {tr("step")};
  for (const auto& step : steps)
    whole << format_duration(static_cast<std::int64_t>(step.duration_ns));
  rows.push_back(whole);
  fill_table(headers, rows);
}

void StepsView::show_phase_steps(const LoadedDatabase& database) {
  const auto& steps = database.report.training_steps;
  if (steps.steps.empty()) {
    status_->setText(
        tr("<b>No training steps</b>: %1").arg(QString::fromStdString(steps.absent).toHtmlEscaped()));
    chart_->set_bars(tr("Time per training step"), {}, ValueUnit::Nanoseconds,
                     tr("Mark each step with MPI_Pcontrol(2), or with an NVTX range named step, to see it "
                        "here (docs/dl-guide.md)."));
    return;
  }
  status_->setText(
      tr("%1 steps on %2 ranks &middot; median %3 (quartiles %4 to %5) &middot; %6 % of step "
         "time in MPI and NCCL calls")
          .arg(steps.steps.size())
          .arg(steps.steps.front().ranks)
          .arg(format_duration(steps.median_ns), format_duration(steps.p25_ns), format_duration(steps.p75_ns))
          .arg(100.0 * steps.mpi_share, 0, 'f', 1) +
      gpu_summary_line(steps));
  // Per step and rank: each function's time, then the rest of the step outside MPI.
  const auto named = busiest_function_names(database, kFunctionsNamed);
  std::vector<Bar> bars;
  for (const auto& step : steps.steps) {
    auto bar = function_split_bar(database.phase_names.name(step.phase), database.phase_function_times,
                                  step.phase, named, std::max(step.ranks, 1));
    const double outside = static_cast<double>(step.duration_ns - step.mpi_ns);
    if (outside > 0)
      bar.segments.insert(bar.segments.begin(),
                          {tr("outside MPI (compute)"), outside, QColor(205, 215, 225)});
    bars.push_back(std::move(bar));
  }
  chart_->set_bars(tr("Time per training step, per rank (mean over ranks)"), std::move(bars),
                   ValueUnit::Nanoseconds);

  const QStringList headers = {tr("Function"), tr("Calls per step"), tr("Bytes sent per step"),
                               tr("Time per step"), tr("Fewest / most calls in a step")};
  std::vector<QStringList> rows;
  for (const auto& function : steps.functions)
    rows.push_back({QString::fromStdString(function.name), QString::number(function.calls_per_step, 'g', 4),
                    format_bytes(static_cast<std::uint64_t>(function.bytes_sent_per_step)),
                    format_duration(static_cast<std::int64_t>(function.time_per_step_ns)),
                    QStringLiteral("%1 / %2").arg(function.min_calls).arg(function.max_calls)});
  fill_table(headers, rows);
}

void StepsView::fill_table(const QStringList& headers, const std::vector<QStringList>& rows) {
  fill(table_, headers, rows);
  if (!from_ranges_)
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
}

void StepsView::fill(QTableWidget* table, const QStringList& headers, const std::vector<QStringList>& rows) {
  table->setColumnCount(static_cast<int>(headers.size()));
  table->setHorizontalHeaderLabels(headers);
  table->setRowCount(static_cast<int>(rows.size()));
  for (int row = 0; const auto& cells : rows) {
    for (int column = 0; column < cells.size(); ++column)
      table->setItem(row, column, new QTableWidgetItem(cells[column]));
    ++row;
  }
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

QString StepsView::status() const {
  return status_->text();
}

int StepsView::function_rows() const {
  return table_->rowCount();
}

QStringList StepsView::headers() const {
  return headers_of(*table_);
}

QString StepsView::cell(int row, int column) const {
  return cell_of(*table_, row, column);
}

QStringList StepsView::gpu_headers() const {
  return headers_of(*gpu_table_);
}

QString StepsView::gpu_cell(int row, int column) const {
  return cell_of(*gpu_table_, row, column);
}

} // namespace commlens::viewer
