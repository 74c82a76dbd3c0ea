#include "timeline_view.hpp"

#include <QCompleter>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

#include <algorithm>

namespace commlens::viewer {

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* toolbar = new QHBoxLayout;
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(tr("Find function (e.g. MPI_Allreduce), Enter for the next call"));
  auto* next = new QPushButton(tr("Next"), this);
  auto* clear = new QPushButton(tr("Clear"), this);
  auto* reset = new QPushButton(tr("Show all"), this);
  toolbar->addWidget(search_, 1);
  toolbar->addWidget(next);
  toolbar->addWidget(clear);
  toolbar->addWidget(reset);
  layout->addLayout(toolbar);
  canvas_ = new TimelineCanvas(this);
  overview_ = new TimelineOverview(canvas_, this);
  legend_ = new TimelineLegend(this);
  // Rows taller than the window scroll; the canvas keeps its ruler and phase band in view itself,
  // so a scroll repaints all of it rather than moving the pixels.
  scroll_ = new QScrollArea(this);
  scroll_->setWidget(canvas_);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  connect(scroll_->verticalScrollBar(), &QScrollBar::valueChanged, canvas_, qOverload<>(&QWidget::update));
  layout->addWidget(overview_);
  layout->addWidget(legend_);
  layout->addWidget(scroll_, 1);
  details_ =
      new QLabel(tr("Wheel or W/S: zoom. Drag or A/D: pan. Click a call for its details, a rank's "
                    "name to fold its rows; drag a rank's lower edge (or Ctrl+wheel) to make it taller "
                    "or shorter. Hatched calls ran in the GPU runtime; dashed outlines mark the "
                    "host-staged baseline; dashed lines join calls to their time on the GPU and to the "
                    "kernels they launched. Double-click a phase to show all of it."),
                 this);
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  details_->setMinimumHeight(64);
  details_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  layout->addWidget(details_);

  const auto search = [this] {
    if (!find_next(search_->text().trimmed()))
      details_->setText(tr("No further call of %1.").arg(search_->text().trimmed().toHtmlEscaped()));
  };
  connect(search_, &QLineEdit::returnPressed, this, search);
  connect(next, &QPushButton::clicked, this, search);
  connect(clear, &QPushButton::clicked, this, [this] {
    search_->clear();
    canvas_->highlight_function(std::nullopt);
  });
  connect(reset, &QPushButton::clicked, canvas_, &TimelineCanvas::show_all);
  connect(canvas_, &TimelineCanvas::selection_changed, this, [this](const QString& details) {
    details_->setText(details.isEmpty() ? tr("Nothing selected.") : details);
  });
}

void TimelineView::set_database(std::shared_ptr<const LoadedDatabase> database) {
  database_ = database;
  QStringList names;
  for (const auto& function : database->report.functions)
    names << QString::fromStdString(function.name);
  auto* completer = new QCompleter(names, search_);
  completer->setCaseSensitivity(Qt::CaseInsensitive);
  search_->setCompleter(completer);
  canvas_->set_database(database);
  legend_->set_entries(legend_entries(*database));
  overview_->set_database(std::move(database));
}

std::optional<int> TimelineView::function_id(const QString& name) const {
  if (!database_)
    return std::nullopt;
  for (const auto& [id, function] : database_->function_names)
    if (QString::fromStdString(function).compare(name, Qt::CaseInsensitive) == 0)
      return id;
  return std::nullopt;
}

bool TimelineView::find_next(const QString& function_name) {
  const auto function_id = this->function_id(function_name);
  canvas_->highlight_function(function_id);
  if (!function_id)
    return false;
  const auto& selection = canvas_->selection();
  const auto after = selection ? selection->call.start_ns + 1 : canvas_->viewport().start_ns();
  const auto next = analysis::query_next_call(*database_->database, *function_id, after);
  if (!next)
    return false;
  const auto& [lane, call] = *next;
  // Keep the current zoom unless the call would not fit; centre it either way.
  const auto span = std::max(canvas_->viewport().span_ns(), (call.end_ns - call.start_ns) * 4);
  const auto middle = call.start_ns + (call.end_ns - call.start_ns) / 2;
  canvas_->show_range(middle - span / 2, middle + span / 2);
  canvas_->select({lane, call});
  return true;
}

void TimelineView::show_place(const analysis::TimelinePlace& place) {
  if (place.end_ns > place.start_ns) {
    // The margins keep in view what the evidence ends on: the late partner's call after a wait.
    const auto margin = std::max<std::int64_t>(1, (place.end_ns - place.start_ns) / 5);
    canvas_->show_range(place.start_ns - margin, place.end_ns + margin);
  } else {
    canvas_->show_all();
  }
  search_->setText(QString::fromStdString(place.function));
  canvas_->highlight_function(function_id(search_->text()));
  if (!place.ranks.empty())
    scroll_to_rank(place.ranks.front());
}

void TimelineView::scroll_to_rank(int rank) {
  if (canvas_->collapsed(rank))
    canvas_->toggle_collapsed(rank);
  const auto& rows = canvas_->rows();
  const auto first =
      std::find_if(rows.begin(), rows.end(), [rank](const auto& row) { return row.rank == rank; });
  if (first == rows.end())
    return;
  // The ruler and the phase band are pinned over the top of the visible part: the rank goes below them.
  const auto top = canvas_->row_rect(static_cast<std::size_t>(first - rows.begin())).top();
  scroll_->verticalScrollBar()->setValue(top - TimelineCanvas::kRulerHeight - canvas_->phase_band_height());
}

} // namespace commlens::viewer
