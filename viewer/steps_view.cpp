#include "steps_view.hpp"

#include "format.hpp"
#include "summary_charts.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace commlens::viewer {
namespace {

constexpr int kFunctionsNamed = 5;

} // namespace

StepsView::StepsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  status_->setTextFormat(Qt::RichText);
  layout->addWidget(status_);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  chart_ = new BarChart(splitter);
  functions_ = new QTableWidget(splitter);
  functions_->verticalHeader()->hide();
  functions_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  splitter->addWidget(chart_);
  splitter->addWidget(functions_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter, 1);
}

void StepsView::set_database(const std::shared_ptr<const LoadedDatabase>& database) {
  const auto& steps = database->report.training_steps;
  functions_->clear();
  functions_->setRowCount(0);
  if (steps.steps.empty()) {
    status_->setText(
        tr("<b>No training steps</b>: %1").arg(QString::fromStdString(steps.absent).toHtmlEscaped()));
    chart_->set_bars(tr("Time per training step"), {}, ValueUnit::Nanoseconds,
                     tr("Mark each step with MPI_Pcontrol(2) to see it here (docs/dl-guide.md)."));
    return;
  }
  status_->setText(
      tr("%1 steps on %2 ranks &middot; median %3 (quartiles %4 to %5) &middot; %6 % of step "
         "time in MPI")
          .arg(steps.steps.size())
          .arg(steps.steps.front().ranks)
          .arg(format_duration(steps.median_ns), format_duration(steps.p25_ns), format_duration(steps.p75_ns))
          .arg(100.0 * steps.mpi_share, 0, 'f', 1));
  // Per step and rank: each function's time, then the rest of the step outside MPI.
  const auto named = busiest_function_names(*database, kFunctionsNamed);
  std::vector<Bar> bars;
  for (const auto& step : steps.steps) {
    auto bar = function_split_bar(tr("step %1").arg(step.phase), database->phase_function_times, step.phase,
                                  named, std::max(step.ranks, 1));
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
  functions_->setColumnCount(static_cast<int>(headers.size()));
  functions_->setHorizontalHeaderLabels(headers);
  functions_->setRowCount(static_cast<int>(steps.functions.size()));
  for (int row = 0; const auto& function : steps.functions) {
    const QStringList cells = {QString::fromStdString(function.name),
                               QString::number(function.calls_per_step, 'g', 4),
                               format_bytes(static_cast<std::uint64_t>(function.bytes_sent_per_step)),
                               format_duration(static_cast<std::int64_t>(function.time_per_step_ns)),
                               QStringLiteral("%1 / %2").arg(function.min_calls).arg(function.max_calls)};
    for (int column = 0; column < cells.size(); ++column)
      functions_->setItem(row, column, new QTableWidgetItem(cells[column]));
    ++row;
  }
  functions_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  functions_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
}

QString StepsView::status() const {
  return status_->text();
}

int StepsView::function_rows() const {
  return functions_->rowCount();
}

} // namespace commlens::viewer
