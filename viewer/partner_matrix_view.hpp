#pragma once
// Partner matrix tab: a heat map of point-to-point bytes or messages from each rank (rows) to
// each rank (columns); darker is more. Hovering a cell shows its exact value.
#include "loaded_database.hpp"
#include "partner_matrix_model.hpp"

#include <QWidget>

class QComboBox;

namespace commlens::viewer {

class HeatMap;

class PartnerMatrixView : public QWidget {
  Q_OBJECT
public:
  explicit PartnerMatrixView(QWidget* parent = nullptr);
  void set_database(const std::shared_ptr<const LoadedDatabase>& database);
  void set_metric(PartnerMetric metric);
  const PartnerMatrixModel& model() const { return model_; }

private:
  PartnerMatrixModel model_;
  QComboBox* metric_box_;
  HeatMap* heat_map_;
};

} // namespace commlens::viewer
