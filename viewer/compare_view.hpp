#pragma once
// Compare tab: the open database (A) against a second one (B) opened here, loaded in the
// background like the first, with per-function and per-size ratios of the mean call time.
#include "compare_model.hpp"
#include "database_loader.hpp"

#include <QWidget>

class QLabel;

namespace commlens::viewer {

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  void open_second(const QString& path);
  DatabaseLoader& loader() { return loader_; }
  const CompareModel& model() const { return model_; }

signals:
  void failed(const QString& path, const QString& reason);

private:
  void refresh();

  std::shared_ptr<const LoadedDatabase> first_, second_;
  DatabaseLoader loader_;
  CompareModel model_;
  QLabel* status_;
};

} // namespace commlens::viewer
