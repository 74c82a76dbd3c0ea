#include "summary_view.hpp"

#include "communication_time.hpp"
#include "format.hpp"
#include "run_facts.hpp"
#include "summary_charts.hpp"

#include "commlens/analysis/errors.hpp"

#include <QCoreApplication>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

namespace commlens::viewer {
namespace {

// Where a finding's items keep the index of its place in the trace (places_).
constexpr int kPlaceRole = Qt::UserRole;

// "Timeline: 150 ms on ranks 1 and 0, MPI_Recv highlighted (double-click to show)"
QString place_text(const analysis::TimelinePlace& place) {
  QStringList ranks;
  for (const int rank : place.ranks)
    ranks << QString::number(rank);
  auto text = place.end_ns > place.start_ns ? format_duration(place.end_ns - place.start_ns)
                                            : QObject::tr("the whole run");
  if (!ranks.isEmpty())
    text += QObject::tr(" on rank%1 %2").arg(ranks.size() > 1 ? "s" : "", ranks.join(QObject::tr(" and ")));
  if (!place.function.empty())
    text += QObject::tr(", %1 highlighted").arg(QString::fromStdString(place.function));
  return QObject::tr("Timeline: %1 (double-click to show)").arg(text);
}

// Numbers sit next to their headers: columns fit their contents, the spare width stays at the right.
void fit_columns(QHeaderView* header) {
  header->setSectionResizeMode(QHeaderView::ResizeToContents);
  header->setStretchLastSection(false);
}

QTableView* make_table(QAbstractItemModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  table->verticalHeader()->hide();
  fit_columns(table->horizontalHeader());
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setAlternatingRowColors(true);
  return table;
}

// The findings of a loaded run, on a pool thread with its own connection (the loaded one belongs
// to the UI thread).
FoundFindings find_in(const std::shared_ptr<const LoadedDatabase>& loaded) {
  FoundFindings found;
  try {
    const analysis::Database database(loaded->path);
    found.section = analysis::build_findings(database, loaded->report);
  } catch (const analysis::AnalysisError& error) {
    found.error = QString::fromStdString(error.what());
  }
  return found;
}

} // namespace

SummaryView::SummaryView(QWidget* parent) : QWidget(parent), functions_(this), ranks_(this) {
  auto* layout = new QVBoxLayout(this);
  headline_ = new QLabel(tr("No database open. Use File > Open or drop a .sqlite file here."), this);
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(headline_);

  auto* charts = new QSplitter(Qt::Horizontal, this);
  rank_chart_ = new BarChart(charts);
  function_chart_ = new BarChart(charts);
  copy_chart_ = new BarChart(charts);
  for (auto* chart : {rank_chart_, function_chart_, copy_chart_})
    charts->addWidget(chart);
  charts->setStretchFactor(0, 3);
  charts->setStretchFactor(1, 2);
  charts->setStretchFactor(2, 2);

  run_table_ = new QTableWidget(0, 2, this);
  run_table_->setHorizontalHeaderLabels({tr("Key"), tr("Value")});
  run_table_->verticalHeader()->hide();
  run_table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  run_table_->horizontalHeader()->setStretchLastSection(true);
  run_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  auto* tables = new QTabWidget(this);
  rank_table_ = make_table(&ranks_, tables);
  tables->addTab(rank_table_, tr("Ranks"));
  tables->addTab(make_table(&functions_, tables), tr("Functions, most time first"));
  tables->addTab(run_table_, tr("Run"));

  findings_ = new QTreeWidget(this);
  findings_->setHeaderLabels({tr("Finding"), tr("Cost"), tr("Id")});
  findings_->setRootIsDecorated(true);
  findings_->setWordWrap(true);
  findings_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  findings_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  findings_->header()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
  findings_->header()->setStretchLastSection(false);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(findings_);
  splitter->addWidget(charts);
  splitter->addWidget(tables);
  splitter->setSizes({140, 380, 300}); // a few findings, ten bars of the functions chart, the tables
  layout->addWidget(splitter, 1);
  connect(&findings_watcher_, &QFutureWatcher<FoundFindings>::finished, this, [this] {
    if (findings_watcher_.future().resultCount() > 0)
      show_findings(findings_watcher_.future().result());
  });
  connect(findings_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    const auto place = item->data(0, kPlaceRole);
    if (place.isValid())
      emit timeline_place_chosen(places_.at(place.toULongLong()));
  });
}

void SummaryView::set_database(std::shared_ptr<const LoadedDatabase> database) {
  const auto& report = database->report;
  const auto communication = run_communication_time(*database);
  ranks_.set_ranks(report.ranks, rank_communication_times(*database));
  rank_table_->setColumnHidden(RankTableModel::NcclTime, communication.nccl_calls == 0);
  functions_.set_functions(report.functions);
  run_table_->setRowCount(static_cast<int>(report.run.size()));
  for (int row = 0; const auto& [key, value] : report.run) {
    run_table_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(key)));
    run_table_->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(value)));
    ++row;
  }
  rank_chart_->set_bars(tr("Time in MPI and NCCL calls per rank, by function"), rank_time_bars(*database),
                        ValueUnit::Nanoseconds, tr("No rank made MPI or NCCL calls."));
  function_chart_->set_bars(tr("Functions with the most time"), top_function_bars(*database),
                            ValueUnit::Nanoseconds, tr("No MPI or NCCL calls."));
  // A run without CUDA copies (every CPU run) gives the other charts the width.
  copy_chart_->setVisible(!database->copy_paths.empty());
  copy_chart_->set_bars(tr("Bytes copied per CUDA path"), copy_path_bars(*database), ValueUnit::Bytes);

  // A search of the run before may still run: its result is not shown (setFuture lets it go).
  findings_->clear();
  places_.clear();
  new QTreeWidgetItem(findings_, {tr("Looking for findings: the wait states read the whole trace...")});
  unsearched_ = database;
  if (isVisible())
    start_finding();
  collectors_ = collectors_line(report.run);
  std::uint64_t calls = 0;
  for (const auto& rank : report.ranks)
    calls += rank.calls;
  headline_->setText(
      tr("<b>%1</b> &middot; schema v%2<br>collectors: %3<br>%4 ranks &middot; %5 calls &middot; time in "
         "communication, summed over ranks: %6<br>%7 dropped events &middot; %8 uncounted (summary overflow)")
          .arg(QString::fromStdString(report.database_path).toHtmlEscaped())
          .arg(report.schema_version)
          .arg(collectors_.toHtmlEscaped())
          .arg(report.ranks.size())
          .arg(format_count(calls), communication_text(communication).toHtmlEscaped(),
               format_count(report.dropped_events), format_count(report.summary_overflow)));
}

SummaryView::~SummaryView() {
  findings_watcher_.waitForFinished();
}

void SummaryView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  start_finding();
}

void SummaryView::start_finding() {
  if (!unsearched_)
    return;
  findings_watcher_.setFuture(QtConcurrent::run(find_in, std::exchange(unsearched_, nullptr)));
}

void SummaryView::wait_for_findings() {
  start_finding();
  findings_watcher_.waitForFinished();
  QCoreApplication::processEvents(); // delivers the finished signal
}

void SummaryView::show_findings(const FoundFindings& found) {
  findings_->clear();
  places_.clear();
  if (!found.error.isEmpty()) {
    new QTreeWidgetItem(findings_, {tr("Findings could not be found: %1").arg(found.error)});
    return;
  }
  const auto& section = found.section;
  const auto text = [](const std::string& value) { return QString::fromStdString(value); };
  for (std::size_t index = 0; index < section.findings.size(); ++index) {
    const auto& finding = section.findings[index];
    auto* item = new QTreeWidgetItem(
        findings_,
        {QStringLiteral("%1. %2").arg(index + 1).arg(text(finding.title)),
         tr("%1, %2%").arg(format_duration(finding.cost_ns)).arg(finding.cost_share * 100.0, 0, 'f', 1),
         text(finding.id)});
    item->setToolTip(0, text(finding.advice));
    const auto detail = [&](const QString& label, const std::string& value) {
      if (!value.empty())
        new QTreeWidgetItem(item, {QStringLiteral("%1: %2").arg(label, text(value))});
    };
    for (const auto& line : finding.evidence)
      detail(tr("Evidence"), line);
    if (finding.timeline) {
      // The finding and its timeline line both open the place, which the tooltip says.
      auto* line = new QTreeWidgetItem(item, {place_text(*finding.timeline)});
      for (auto* opening : {item, line})
        opening->setData(0, kPlaceRole, QVariant::fromValue(places_.size()));
      item->setToolTip(
          0, tr("%1\nDouble-click to show its evidence in the timeline.").arg(text(finding.advice)));
      places_.push_back(*finding.timeline);
    }
    detail(tr("See"), finding.view);
    detail(tr("Try"), finding.advice);
    detail(tr("Query"), finding.query);
  }
  if (section.findings.empty())
    new QTreeWidgetItem(findings_, {tr("No finding: no rule reached its threshold")});
  for (const auto& line : section.not_analysed)
    new QTreeWidgetItem(findings_, {tr("Not analysed: %1").arg(text(line))});
}

QString SummaryView::headline() const {
  return headline_->text();
}

} // namespace commlens::viewer
