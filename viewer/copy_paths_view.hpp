#pragma once
// Copy paths tab: bytes, copies and bandwidth per CUDA copy path, per rank and GPU, as the analysis
// layer's CUDA section reports them; "no CUDA data" when the run recorded none.
#include "loaded_database.hpp"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace commlens::viewer {

class CopyPathsView : public QWidget {
  Q_OBJECT
public:
  explicit CopyPathsView(QWidget* parent = nullptr);
  void set_database(const std::shared_ptr<const LoadedDatabase>& database);
  QString status() const;
  int rows() const;

private:
  QLabel* status_;
  QTableWidget* table_;
};

} // namespace commlens::viewer
