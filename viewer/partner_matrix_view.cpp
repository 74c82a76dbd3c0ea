#include "partner_matrix_view.hpp"

#include "function_table_model.hpp"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QSignalBlocker>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <map>

namespace commlens::viewer {

class HeatMap : public QWidget {
public:
  HeatMap(const PartnerMatrixModel& model, QWidget* parent) : QWidget(parent), model_(model) {
    setMinimumSize(300, 300);
    setAutoFillBackground(true);
    setPalette(QPalette(Qt::white));
  }

protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    const int ranks = model_.rowCount();
    if (ranks == 0 || model_.highest() == 0) {
      painter.drawText(rect(), Qt::AlignCenter, tr("No traffic of this kind between ranks."));
      return;
    }
    const QRect grid = plot_area();
    const double cell = static_cast<double>(grid.width()) / ranks;
    // A logarithmic scale: neighbours exchanging 1000x more than the rest should not hide the rest.
    const double top = std::log1p(static_cast<double>(model_.highest()));
    for (int from = 0; from < ranks; ++from)
      for (int to = 0; to < ranks; ++to) {
        const auto value = model_.value(from, to);
        const double heat = value ? std::log1p(static_cast<double>(value)) / top : 0;
        const QColor color =
            value ? QColor::fromHsvF(0.6, 0.15 + 0.85 * heat, 1.0 - 0.55 * heat) : QColor(245, 245, 245);
        const QRectF box(grid.left() + to * cell, grid.top() + from * cell, cell - 1, cell - 1);
        painter.fillRect(box, color);
        if (cell > 48) {
          painter.setPen(heat > 0.6 ? Qt::white : Qt::black);
          painter.drawText(box, Qt::AlignCenter,
                           model_.data(model_.index(from, to), Qt::DisplayRole).toString());
        }
      }
    painter.setPen(Qt::black);
    const int label_every = std::max(1, static_cast<int>(std::ceil(18 / cell)));
    for (int rank = 0; rank < ranks; rank += label_every) {
      painter.drawText(QRectF(grid.left() + rank * cell, grid.top() - 18, cell, 16), Qt::AlignCenter,
                       QString::number(rank));
      painter.drawText(QRectF(grid.left() - 34, grid.top() + rank * cell, 30, cell),
                       Qt::AlignRight | Qt::AlignVCenter, QString::number(rank));
    }
    painter.drawText(QRect(grid.left(), 2, grid.width(), 16), Qt::AlignCenter, tr("receiver"));
    painter.save();
    painter.translate(10, grid.center().y());
    painter.rotate(-90);
    painter.drawText(QRect(-40, -8, 80, 16), Qt::AlignCenter, tr("sender"));
    painter.restore();
  }

  bool event(QEvent* event) override {
    if (event->type() != QEvent::ToolTip)
      return QWidget::event(event);
    const auto* help = static_cast<QHelpEvent*>(event);
    const int ranks = model_.rowCount();
    const QRect grid = plot_area();
    if (ranks > 0 && grid.contains(help->pos())) {
      const double cell = static_cast<double>(grid.width()) / ranks;
      const int to = static_cast<int>((help->pos().x() - grid.left()) / cell);
      const int from = static_cast<int>((help->pos().y() - grid.top()) / cell);
      if (from < ranks && to < ranks)
        QToolTip::showText(help->globalPos(),
                           tr("rank %1 -> rank %2: %3")
                               .arg(from)
                               .arg(to)
                               .arg(model_.data(model_.index(from, to), Qt::DisplayRole).toString()),
                           this);
    }
    return true;
  }

private:
  QRect plot_area() const {
    const int side = std::max(10, std::min(width() - 50, height() - 30));
    return {40, 24, side, side};
  }

  const PartnerMatrixModel& model_;
};

namespace {

QString kind_name(analysis::TrafficKind kind) {
  switch (kind) {
  case analysis::TrafficKind::MpiPointToPoint:
    return QObject::tr("MPI point-to-point");
  case analysis::TrafficKind::NcclPointToPoint:
    return QObject::tr("NCCL point-to-point");
  case analysis::TrafficKind::NcclCollective:
    return QObject::tr("NCCL collectives");
  }
  return {};
}

// What a cell means for the kind: point-to-point cells are messages; a collective has no single
// receiver, so its cells are a model that the line says.
QString kind_note(analysis::TrafficKind kind) {
  if (kind == analysis::TrafficKind::NcclCollective)
    return QObject::tr(
        "Each collective call's bytes (what the rank contributes) spread evenly over the other "
        "members of its communicator: a row adds up to what the rank put into collectives; "
        "operations are the calls the two ranks shared. NCCL's own ring or tree moves "
        "the data between neighbours.");
  return QObject::tr("Messages from the sending rank (row) to the receiving rank (column).");
}

} // namespace

PartnerMatrixView::PartnerMatrixView(QWidget* parent) : QWidget(parent), model_(this) {
  auto* layout = new QVBoxLayout(this);
  auto* selectors = new QHBoxLayout;
  kind_box_ = new QComboBox(this);
  kind_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  metric_box_ = new QComboBox(this);
  metric_box_->addItem(tr("bytes"), int(PartnerMetric::Bytes));
  metric_box_->addItem(tr("operations"), int(PartnerMetric::Messages));
  selectors->addWidget(new QLabel(tr("Traffic between ranks, sender (row) to receiver (column):"), this));
  selectors->addWidget(kind_box_);
  selectors->addWidget(new QLabel(tr("in"), this));
  selectors->addWidget(metric_box_);
  selectors->addStretch(1);
  layout->addLayout(selectors);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  layout->addWidget(note_);
  heat_map_ = new HeatMap(model_, this);
  layout->addWidget(heat_map_, 1);
  connect(metric_box_, &QComboBox::currentIndexChanged, this,
          [this] { set_metric(static_cast<PartnerMetric>(metric_box_->currentData().toInt())); });
  connect(kind_box_, &QComboBox::currentIndexChanged, this, [this] {
    if (kind_box_->currentIndex() >= 0)
      set_kind(static_cast<analysis::TrafficKind>(kind_box_->currentData().toInt()));
  });
}

void PartnerMatrixView::set_database(const std::shared_ptr<const LoadedDatabase>& database) {
  database_ = database;
  // The kinds this run has, the one with the most bytes first shown.
  std::map<analysis::TrafficKind, double> bytes;
  for (const auto& cell : database->partner_traffic)
    bytes[cell.kind] += cell.bytes;
  auto busiest = analysis::TrafficKind::MpiPointToPoint;
  for (const auto& [kind, total] : bytes)
    if (total > bytes[busiest])
      busiest = kind;
  const QSignalBlocker blocker(kind_box_);
  kind_box_->clear();
  for (const auto kind : {analysis::TrafficKind::MpiPointToPoint, analysis::TrafficKind::NcclPointToPoint,
                          analysis::TrafficKind::NcclCollective})
    if (bytes.contains(kind) || kind == analysis::TrafficKind::MpiPointToPoint)
      kind_box_->addItem(kind_name(kind), int(kind));
  set_kind(busiest);
}

void PartnerMatrixView::set_kind(analysis::TrafficKind kind) {
  if (!database_)
    return;
  model_.set_traffic(static_cast<int>(database_->report.ranks.size()), database_->partner_traffic, kind);
  {
    const QSignalBlocker blocker(kind_box_);
    kind_box_->setCurrentIndex(kind_box_->findData(int(kind)));
  }
  note_->setText(kind_note(kind));
  heat_map_->update();
}

void PartnerMatrixView::set_metric(PartnerMetric metric) {
  model_.set_metric(metric);
  metric_box_->setCurrentIndex(metric_box_->findData(int(metric)));
  heat_map_->update();
}

QStringList PartnerMatrixView::kinds() const {
  QStringList names;
  for (int index = 0; index < kind_box_->count(); ++index)
    names << kind_box_->itemText(index);
  return names;
}

QString PartnerMatrixView::note() const {
  return note_->text();
}

} // namespace commlens::viewer
