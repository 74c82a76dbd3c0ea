#pragma once
// Compare tab: the open database (A) against a second one (B) opened here, loaded in the
// background like the first, with per-function and per-size ratios of the mean call time. A run
// made with COMMLENS_RUNTIME=ab holds two implementations of the same calls (`mpi` and
// `runtime:*`): those are compared with each other (analysis::compare_implementations) until a
// second database is opened, and again on "Compare implementations in this run".
#include "compare_model.hpp"
#include "database_loader.hpp"

#include <QFutureWatcher>
#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;

namespace commlens::viewer {

// What the pool thread found: the traced implementations and, with two or more, their comparison.
struct ImplementationComparison {
  std::vector<std::string> implementations; // `mpi` first
  std::optional<analysis::Comparison> comparison;
  QString error;
};

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QWidget* parent = nullptr);
  ~CompareView() override;
  void set_database(std::shared_ptr<const LoadedDatabase> database);
  void open_second(const QString& path);
  // Compares `mpi` with `runtime` (default: the first runtime implementation) in database A.
  void compare_implementations(const QString& runtime = {});
  DatabaseLoader& loader() { return loader_; }
  // Blocks until the implementations of A are known and compared; for the screenshot mode and tests.
  void wait_for_implementations();
  const CompareModel& model() const { return model_; }
  QString status() const;

signals:
  void failed(const QString& path, const QString& reason);

protected:
  // The implementations are looked up when the tab is first shown: that query reads mpi_calls, and
  // most uses of the viewer never open this tab.
  void showEvent(QShowEvent* event) override;

private:
  void refresh();
  void show_implementations(const ImplementationComparison& result);

  std::shared_ptr<const LoadedDatabase> first_, second_;
  DatabaseLoader loader_;
  CompareModel model_;
  QFutureWatcher<ImplementationComparison> implementations_watcher_;
  bool implementations_requested_ = false;
  bool showing_implementations_ = false;
  QLabel* status_;
  QComboBox* runtime_choice_;
  QPushButton* implementations_button_;
};

} // namespace commlens::viewer
