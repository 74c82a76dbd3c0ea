#pragma once
// Lines over time: one series per name (bandwidth of each copy path through the run), on a time
// axis from the run's start and a value axis whose ticks carry their unit.
#include "chart_axis.hpp"

#include <QColor>
#include <QWidget>

namespace commlens::viewer {

struct Series {
  QString name;
  QColor color;
  std::vector<double> values;         // one per slice of equal width
  Qt::PenStyle style = Qt::SolidLine; // tells apart series that share a colour
};

class SeriesChart : public QWidget {
  Q_OBJECT
public:
  explicit SeriesChart(QWidget* parent = nullptr);
  // The series' slices cover `span_ns` from the run's start.
  void set_series(QString title, std::vector<Series> series, std::int64_t span_ns, ValueUnit unit,
                  QString empty_text = {});
  const std::vector<Series>& series() const { return series_; }
  QStringList value_tick_labels() const;
  QStringList time_tick_labels() const;

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  double highest() const;

  QString title_, empty_text_;
  std::vector<Series> series_;
  std::int64_t span_ns_ = 0;
  ValueUnit unit_ = ValueUnit::Count;
};

} // namespace commlens::viewer
