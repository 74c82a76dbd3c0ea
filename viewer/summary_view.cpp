#include "summary_view.hpp"

#include "format.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace commlens::viewer {
namespace {

QTableView* make_table(QAbstractItemModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setAlternatingRowColors(true);
  return table;
}

QWidget* titled(const QString& title, QWidget* content, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(title), box);
  layout->addWidget(label);
  layout->addWidget(content);
  content->setParent(box);
  return box;
}

} // namespace

SummaryView::SummaryView(QWidget* parent) : QWidget(parent), functions_(this), ranks_(this) {
  auto* layout = new QVBoxLayout(this);
  headline_ = new QLabel(tr("No database open. Use File > Open or drop a .sqlite file here."), this);
  headline_->setWordWrap(true);
  headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(headline_);

  run_table_ = new QTableWidget(0, 2, this);
  run_table_->setHorizontalHeaderLabels({tr("Key"), tr("Value")});
  run_table_->verticalHeader()->hide();
  run_table_->horizontalHeader()->setStretchLastSection(true);
  run_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(titled(tr("Time in MPI per rank"), make_table(&ranks_, this), splitter));
  splitter->addWidget(titled(tr("Functions, most time first"), make_table(&functions_, this), splitter));
  splitter->addWidget(titled(tr("Run"), run_table_, splitter));
  layout->addWidget(splitter, 1);
}

void SummaryView::set_database(std::shared_ptr<const LoadedDatabase> database) {
  const auto& report = database->report;
  ranks_.set_ranks(report.ranks);
  functions_.set_functions(report.functions);
  run_table_->setRowCount(static_cast<int>(report.run.size()));
  for (int row = 0; const auto& [key, value] : report.run) {
    run_table_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(key)));
    run_table_->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(value)));
    ++row;
  }
  run_table_->resizeColumnToContents(0);

  const auto run_value = [&](std::string_view key) {
    for (const auto& [name, value] : report.run)
      if (name == key)
        return QString::fromStdString(value);
    return tr("unknown");
  };
  std::uint64_t calls = 0;
  std::int64_t mpi_ns = 0;
  for (const auto& rank : report.ranks) {
    calls += rank.calls;
    mpi_ns += rank.mpi_ns;
  }
  headline_->setText(
      tr("<b>%1</b><br>schema v%2 &middot; mode %3 &middot; collectors %4 &middot; %5 ranks &middot; "
         "%6 calls &middot; %7 in MPI &middot; %8 dropped events &middot; %9 uncounted (summary overflow)")
          .arg(QString::fromStdString(report.database_path).toHtmlEscaped())
          .arg(report.schema_version)
          .arg(run_value("mode"), run_value("config.COMMLENS_COLLECTORS"))
          .arg(report.ranks.size())
          .arg(format_count(calls), format_duration(mpi_ns), format_count(report.dropped_events),
               format_count(report.summary_overflow)));
}

QString SummaryView::headline() const {
  return headline_->text();
}

} // namespace commlens::viewer
