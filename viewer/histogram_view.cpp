#include "histogram_view.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/function_histograms.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace commlens::viewer {

int busiest_function(const std::vector<analysis::FunctionStats>& functions) {
  // The list is most time first, so without bytes the first entry is the answer.
  int busiest = 0;
  std::uint64_t most_bytes = 0;
  for (int index = 0; const auto& function : functions) {
    if (function.bytes_sent + function.bytes_recv > most_bytes) {
      most_bytes = function.bytes_sent + function.bytes_recv;
      busiest = index;
    }
    ++index;
  }
  return functions.empty() ? -1 : busiest;
}

HistogramView::HistogramView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* selectors = new QHBoxLayout;
  function_box_ = new QComboBox(this);
  phase_box_ = new QComboBox(this);
  metric_box_ = new QComboBox(this);
  metric_box_->addItem(tr("calls"), int(HistogramMetric::Calls));
  metric_box_->addItem(tr("bytes"), int(HistogramMetric::Bytes));
  metric_box_->addItem(tr("time"), int(HistogramMetric::Time));
  selectors->addWidget(new QLabel(tr("Function"), this));
  selectors->addWidget(function_box_, 1);
  selectors->addWidget(new QLabel(tr("Phase"), this));
  selectors->addWidget(phase_box_);
  selectors->addWidget(new QLabel(tr("Show"), this));
  selectors->addWidget(metric_box_);
  layout->addLayout(selectors);
  chart_ = new HistogramChart(this);
  layout->addWidget(chart_, 1);
  for (auto* box : {function_box_, phase_box_, metric_box_})
    connect(box, &QComboBox::currentIndexChanged, this, &HistogramView::refresh);
}

void HistogramView::set_database(std::shared_ptr<const LoadedDatabase> database) {
  database_ = std::move(database);
  const QSignalBlocker function_blocker(function_box_), phase_blocker(phase_box_);
  function_box_->clear();
  for (const auto& function : database_->report.functions)
    function_box_->addItem(QString::fromStdString(function.name));
  function_box_->setCurrentIndex(busiest_function(database_->report.functions));
  phase_box_->clear();
  phase_box_->addItem(tr("all"), QVariant());
  for (const auto& phase : database_->report.phases)
    phase_box_->addItem(QString::number(phase.phase), phase.phase);
  refresh();
}

bool HistogramView::select_function(const QString& name) {
  const int index = function_box_->findText(name);
  if (index >= 0)
    function_box_->setCurrentIndex(index);
  return index >= 0;
}

bool HistogramView::select_phase(std::optional<int> phase) {
  const int index = phase ? phase_box_->findData(*phase) : 0;
  if (index >= 0)
    phase_box_->setCurrentIndex(index);
  return index >= 0;
}

QString HistogramView::selected_function() const {
  return function_box_->currentText();
}

void HistogramView::select_metric(HistogramMetric metric) {
  metric_box_->setCurrentIndex(metric_box_->findData(int(metric)));
}

void HistogramView::refresh() {
  if (!database_ || function_box_->count() == 0)
    return;
  const auto name = function_box_->currentText().toStdString();
  const auto metric = static_cast<HistogramMetric>(metric_box_->currentData().toInt());
  const auto phase_data = phase_box_->currentData();
  std::vector<analysis::SizeBinStats> bins;
  // call_stats is small (one row per rank x function x bin x peer x phase), so the per-phase query
  // runs on the UI thread; the whole-run histogram is already in the report.
  const auto functions =
      phase_data.isValid()
          ? analysis::query_function_histograms(*database_->database, {.phase = phase_data.toInt()})
          : database_->report.functions;
  for (const auto& function : functions)
    if (function.name == name)
      bins = function.size_histogram;
  const auto phase_text = phase_data.isValid() ? tr(", phase %1").arg(phase_data.toInt()) : QString();
  chart_->set_histogram(
      tr("%1 message sizes, %2%3").arg(QString::fromStdString(name), metric_box_->currentText(), phase_text),
      std::move(bins), metric);
}

} // namespace commlens::viewer
