#pragma once
// Steps tab: one column per training step. A run whose steps are NVTX ranges (examples/dl's trainer
// with CUDA: `step` holding `forward`, `backward`, `allreduce` and `optimizer`) shows each step's
// time, mean over ranks, split into forward, backward, communication, optimizer and the rest, and
// a table of the same with the steps as columns. Otherwise a run that marks its steps with
// MPI_Pcontrol(2) (docs/dl-guide.md) shows each step split into the MPI functions it called and the
// time outside MPI, and the functions per step below. Without either it says why (the analysis
// layer's reason). Beside that, the GPU per step (steps_gpu.hpp): compute, overlapped and exposed
// communication and idle time in the steps whose kernels were recorded, else the NCCL calls' time
// on the GPU, with a table of the same.
#include "bar_chart.hpp"
#include "loaded_database.hpp"

#include <QWidget>

class QLabel;
class QTabWidget;
class QTableWidget;

namespace commlens::viewer {

class StepsView : public QWidget {
  Q_OBJECT
public:
  explicit StepsView(QWidget* parent = nullptr);
  void set_database(const std::shared_ptr<const LoadedDatabase>& database);
  QString status() const;
  const BarChart& chart() const { return *chart_; }
  // The GPU chart (hidden for runs without a breakdown or NCCL GPU time) and its table.
  const BarChart& gpu_chart() const { return *gpu_chart_; }
  QStringList gpu_headers() const;
  QString gpu_cell(int row, int column) const;
  // True when the steps come from NVTX ranges (split by part), false for MPI_Pcontrol steps.
  bool from_ranges() const { return from_ranges_; }
  int function_rows() const;
  // The table as shown: its column headers and a cell's text.
  QStringList headers() const;
  QString cell(int row, int column) const;

private:
  void show_range_steps(const LoadedDatabase& database);
  void show_phase_steps(const LoadedDatabase& database);
  void show_gpu(const analysis::TrainingSteps& steps);
  void fill_table(const QStringList& headers, const std::vector<QStringList>& rows);
  static void fill(QTableWidget* table, const QStringList& headers, const std::vector<QStringList>& rows);

  QLabel* status_;
  BarChart* chart_;
  BarChart* gpu_chart_;
  QTabWidget* tables_;
  QTableWidget* table_;
  QTableWidget* gpu_table_;
  bool from_ranges_ = false;
};

} // namespace commlens::viewer
