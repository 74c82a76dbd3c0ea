#pragma once
// Partner matrix tab: a heat map of the traffic from each rank (rows) to each rank (columns), in
// bytes or operations; darker is more. MPI point-to-point, NCCL point-to-point and NCCL collectives
// are shown apart (chosen in a box; the run's busiest kind first), with a line saying what a cell
// means. Hovering a cell shows its exact value.
#include "loaded_database.hpp"
#include "partner_matrix_model.hpp"

#include <QWidget>

class QComboBox;
class QLabel;

namespace commlens::viewer {

class HeatMap;

class PartnerMatrixView : public QWidget {
  Q_OBJECT
public:
  explicit PartnerMatrixView(QWidget* parent = nullptr);
  void set_database(const std::shared_ptr<const LoadedDatabase>& database);
  void set_metric(PartnerMetric metric);
  void set_kind(analysis::TrafficKind kind);
  const PartnerMatrixModel& model() const { return model_; }
  // The kinds offered, as the box names them, and the line under it.
  QStringList kinds() const;
  QString note() const;

private:
  std::shared_ptr<const LoadedDatabase> database_;
  PartnerMatrixModel model_;
  QComboBox* kind_box_;
  QComboBox* metric_box_;
  QLabel* note_;
  HeatMap* heat_map_;
};

} // namespace commlens::viewer
