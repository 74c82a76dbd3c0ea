#include "histogram_view.hpp"

#include "palette.hpp"

#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/function_histograms.hpp"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace commlens::viewer {
namespace {

constexpr int kFunctionListWidth = 200;

QString file_name(const LoadedDatabase& database) {
  return QFileInfo(QString::fromStdString(database.path.string())).fileName();
}

// How the legend names `database` next to `other`: its file name, and when both files have one name
// (two runs' commlens.sqlite) the nearest folder where their paths part ("run-a/.../commlens.sqlite").
QString run_name(const LoadedDatabase& database, const LoadedDatabase& other) {
  const auto name = file_name(database);
  if (name != file_name(other))
    return name;
  const auto own = QString::fromStdString(database.path.string()).split(QLatin1Char('/'));
  const auto others = QString::fromStdString(other.path.string()).split(QLatin1Char('/'));
  for (qsizetype up = 2; up <= own.size(); ++up) {
    const auto folder = own[own.size() - up];
    if (up > others.size() || folder != others[others.size() - up])
      return folder + (up > 2 ? QStringLiteral("/.../") : QStringLiteral("/")) + name;
  }
  return name; // the same file twice
}

std::vector<analysis::SizeBinStats> bins_of(const std::vector<analysis::FunctionStats>& functions,
                                            const QString& name) {
  for (const auto& function : functions)
    if (QString::fromStdString(function.name) == name)
      return function.size_histogram;
  return {};
}

} // namespace

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
  phase_box_ = new QComboBox(this);
  metric_box_ = new QComboBox(this);
  metric_box_->addItem(tr("calls"), int(HistogramMetric::Calls));
  metric_box_->addItem(tr("bytes"), int(HistogramMetric::Bytes));
  metric_box_->addItem(tr("time"), int(HistogramMetric::Time));
  auto* open_second = new QPushButton(tr("Overlay a second run..."), this);
  second_label_ = new QLabel(this);
  clear_second_ = new QPushButton(tr("Remove it"), this);
  clear_second_->hide();
  selectors->addWidget(new QLabel(tr("Phase"), this));
  selectors->addWidget(phase_box_);
  selectors->addWidget(new QLabel(tr("Show"), this));
  selectors->addWidget(metric_box_);
  selectors->addStretch(1);
  selectors->addWidget(second_label_);
  selectors->addWidget(clear_second_);
  selectors->addWidget(open_second);
  layout->addLayout(selectors);

  auto* body = new QHBoxLayout;
  auto* functions = new QVBoxLayout;
  functions->addWidget(new QLabel(tr("Functions (Ctrl+click overlays)"), this));
  function_list_ = new QListWidget(this);
  function_list_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  function_list_->setFixedWidth(kFunctionListWidth);
  functions->addWidget(function_list_, 1);
  body->addLayout(functions);
  chart_ = new HistogramChart(this);
  body->addWidget(chart_, 1);
  layout->addLayout(body, 1);

  for (auto* box : {phase_box_, metric_box_})
    connect(box, &QComboBox::currentIndexChanged, this, &HistogramView::refresh);
  connect(function_list_, &QListWidget::itemSelectionChanged, this, &HistogramView::refresh);
  connect(open_second, &QPushButton::clicked, this, &HistogramView::second_run_requested);
  connect(clear_second_, &QPushButton::clicked, this, [this] { set_second_database(nullptr); });
}

void HistogramView::set_database(std::shared_ptr<const LoadedDatabase> database) {
  database_ = std::move(database);
  {
    const QSignalBlocker function_blocker(function_list_), phase_blocker(phase_box_);
    function_list_->clear();
    for (const auto& function : database_->report.functions)
      function_list_->addItem(QString::fromStdString(function.name));
    const int busiest = busiest_function(database_->report.functions);
    if (busiest >= 0) {
      function_list_->setCurrentRow(busiest);
      function_list_->scrollToItem(function_list_->item(busiest));
    }
    phase_box_->clear();
    phase_box_->addItem(tr("all"), QVariant());
    for (const auto& phase : database_->report.phases)
      phase_box_->addItem(QString::number(phase.phase), phase.phase);
  }
  refresh();
}

void HistogramView::set_second_database(std::shared_ptr<const LoadedDatabase> database) {
  second_ = std::move(database);
  second_label_->setText(second_ && database_ ? tr("overlaid: %1").arg(run_name(*second_, *database_))
                                              : QString());
  clear_second_->setVisible(second_ != nullptr);
  refresh();
}

bool HistogramView::select_function(const QString& name) {
  return select_functions({name});
}

bool HistogramView::select_functions(const QStringList& names) {
  std::vector<QListWidgetItem*> items;
  for (const auto& name : names) {
    const auto found = function_list_->findItems(name, Qt::MatchExactly);
    if (found.isEmpty())
      return false;
    items.push_back(found.first());
  }
  {
    const QSignalBlocker blocker(function_list_);
    function_list_->clearSelection();
    for (auto* item : items)
      item->setSelected(true);
  }
  refresh();
  return true;
}

bool HistogramView::select_phase(std::optional<int> phase) {
  const int index = phase ? phase_box_->findData(*phase) : 0;
  if (index >= 0)
    phase_box_->setCurrentIndex(index);
  return index >= 0;
}

QString HistogramView::selected_function() const {
  const auto selected = selected_functions();
  return selected.isEmpty() ? QString() : selected.first();
}

QStringList HistogramView::selected_functions() const {
  QStringList names;
  for (int row = 0; row < function_list_->count(); ++row)
    if (function_list_->item(row)->isSelected())
      names << function_list_->item(row)->text();
  return names;
}

void HistogramView::select_metric(HistogramMetric metric) {
  metric_box_->setCurrentIndex(metric_box_->findData(int(metric)));
}

std::vector<analysis::FunctionStats> HistogramView::functions_of(const LoadedDatabase& database) const {
  // call_stats is small (one row per rank x function x bin x peer x phase), so the per-phase query
  // runs on the UI thread; the whole-run histogram is already in the report.
  const auto phase = phase_box_->currentData();
  return phase.isValid() ? analysis::query_function_histograms(*database.database, {.phase = phase.toInt()})
                         : database.report.functions;
}

void HistogramView::refresh() {
  if (!database_)
    return;
  const auto names = selected_functions();
  const auto metric = static_cast<HistogramMetric>(metric_box_->currentData().toInt());
  const auto phase = phase_box_->currentData();
  const auto functions = functions_of(*database_);
  const auto second_functions = second_ ? functions_of(*second_) : std::vector<analysis::FunctionStats>{};
  // This run's functions in chart colours; a second run's beside each in a lighter shade of it.
  std::vector<HistogramSeries> series;
  for (int index = 0; const auto& name : names) {
    const auto color = chart_color(index++);
    series.push_back({second_ ? tr("%1 (%2)").arg(name, run_name(*database_, *second_)) : name, color,
                      bins_of(functions, name)});
    if (second_)
      series.push_back({tr("%1 (%2)").arg(name, run_name(*second_, *database_)), color.lighter(150),
                        bins_of(second_functions, name)});
  }
  const auto subject = names.size() == 1 ? names.first() : tr("%1 functions'").arg(names.size());
  const auto phase_text = phase.isValid() ? tr(", phase %1").arg(phase.toInt()) : QString();
  chart_->set_histograms(tr("%1 message sizes, %2%3").arg(subject, metric_box_->currentText(), phase_text),
                         std::move(series), metric);
}

} // namespace commlens::viewer
