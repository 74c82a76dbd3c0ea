#pragma once
// The timeline's legend: a swatch and a name for every colour family and pattern the open run
// uses (palette.hpp): MPI and NCCL call families, the GPU runtime's hatching and the baseline's
// outline, NCCL calls' time on the GPU, compute and communication kernels, copies by path,
// memsets, CUDA synchronisation and NVTX ranges. Entries wrap onto as many lines as the width needs.
#include "loaded_database.hpp"

#include <QColor>
#include <QWidget>

namespace commlens::viewer {

struct LegendEntry {
  enum class Style { Fill, Hatched, Outlined };
  QString name;
  QColor color;
  Style style = Style::Fill;
};

std::vector<LegendEntry> legend_entries(const LoadedDatabase& database);

class TimelineLegend : public QWidget {
  Q_OBJECT
public:
  explicit TimelineLegend(QWidget* parent = nullptr);
  void set_entries(std::vector<LegendEntry> entries);
  const std::vector<LegendEntry>& entries() const { return entries_; }

protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

private:
  // Where each entry's swatch and name go at the current width, and the height they need.
  std::vector<QRect> entry_boxes(int* height) const;
  void fit_height();

  std::vector<LegendEntry> entries_;
};

} // namespace commlens::viewer
