#pragma once
// The drawing surface of the timeline: a time ruler, a band of phases across ranks (training steps
// named as the Steps view names them) and the rows of timeline_rows.hpp: per rank its NVTX ranges
// and phases, one lane per thread with its calls coloured by family (palette.hpp), its CUDA API
// calls, its CUDA synchronisation calls and a lane per CUDA stream with the kernels, copies,
// memsets and NCCL calls' GPU time there. Calls narrower than a pixel arrive merged into bins (see
// analysis/timeline.hpp), so painting costs the same at any zoom. A training run opens on its steady
// steps, the set-up folded to a chip at the band's left that shows it when clicked; double-clicking
// a phase shows all of it. Wheel zooms around the cursor, dragging pans, hovering shows a call's
// arguments, clicking selects it. Call lanes share the height; clicking a rank's name collapses or
// expands its rows, dragging the lower edge of a rank's lanes or Ctrl+wheel over them makes them
// taller or shorter. Keys as in Perfetto: W/S zoom in/out around the centre, A/D pan left/right.
// Calls the GPU runtime ran are hatched and calls of the host-staged baseline outlined, so an A/B
// run shows which was which. A dashed line joins a call to each kernel it launched and to its time
// on the GPU, and a CUDA API call to the kernel, copy or memset it made (timeline_kernel_links.cpp).
#include "loaded_database.hpp"
#include "timeline_annotations.hpp"
#include "timeline_api_calls.hpp"
#include "timeline_fetcher.hpp"
#include "timeline_rows.hpp"
#include "timeline_streams.hpp"
#include "timeline_viewport.hpp"

#include <QWidget>

namespace commlens::viewer {

struct SelectedCall {
  analysis::TimelineLane lane;
  analysis::TimelineCall call;
};

// How a call's implementation is drawn: plain (the MPI library), hatched (the GPU runtime ran it) or
// outlined (the baseline that stages device buffers through host memory).
enum class ImplementationStyle { Mpi, Runtime, Baseline };
ImplementationStyle implementation_style(const QString& implementation_name);

class TimelineCanvas : public QWidget {
  Q_OBJECT
public:
  static constexpr int kGutterWidth = 84, kRulerHeight = 24, kPhaseBandHeight = 18,
                       kMinimumCanvasHeight = 200;

  explicit TimelineCanvas(QWidget* parent = nullptr);
  void set_database(std::shared_ptr<const LoadedDatabase> database);

  const TimelineViewport& viewport() const { return viewport_; }
  const TimelineFetcher& fetcher() const { return fetcher_; }
  const std::vector<TimelineRow>& rows() const { return rows_; }
  // Where row `index` is drawn (the full width, gutter included); empty for a collapsed rank's
  // annotation rows.
  QRect row_rect(std::size_t index) const;
  // Collapses a rank's rows to thin strips, or expands them again.
  void toggle_collapsed(int rank);
  bool collapsed(int rank) const;
  // Gives a rank's lanes `factor` times their share of the height (Ctrl+wheel over them).
  void resize_rank(int rank, double factor);
  // The height of a rank's call lanes together, and setting it (dragging the rank's lower edge);
  // the other ranks share what is left.
  int lanes_height(int rank) const;
  void set_lanes_height(int rank, int pixels);
  // The rank whose lower lane edge is under `position` (a drag there resizes it), if any.
  std::optional<int> resize_handle_at(QPoint position) const;
  ImplementationStyle style_of(const analysis::TimelineCall& call) const;
  // The lines drawn from each message's send to its receive's completion, in widget pixels.
  std::vector<QLineF> message_lines() const;
  // The dashed lines from each call drawn on its own to the kernels it launched (cuda_kernels rows
  // whose mpi_call_id is the call's) and to its span on the GPU (device_spans), in widget pixels.
  std::vector<QLineF> kernel_links() const;
  // The dashed lines from each CUDA API call to the kernel, copy or memset of its correlation id on
  // a stream lane of its rank, in widget pixels.
  std::vector<QLineF> api_links() const;
  void zoom(double factor, double x);
  void pan(double dx);
  void show_range(std::int64_t start_ns, std::int64_t end_ns);
  void show_all();
  // Keeps the zoom and moves the window's middle to `time_ns` (the overview strip's clicks).
  void centre_on(std::int64_t time_ns);
  // Shows all of a phase over every rank (double-click in the band), or the set-up up to the window's
  // end (the set-up chip).
  void show_phase(int phase);
  void show_setup();
  // Where the folded set-up is drawn in the band, while the window starts after it; empty otherwise.
  std::optional<QRectF> setup_chip() const;
  // Height of the band of MPI_Pcontrol phases under the ruler; 0 when the run has one phase only.
  int phase_band_height() const { return phase_band_ ? kPhaseBandHeight : 0; }
  // Selects the call (not a bin) under `position`; false and no selection when there is none. Over
  // a copy, range or phase, shows its details without selecting a call.
  bool select_at(QPoint position);
  void select(const SelectedCall& selected);
  const std::optional<SelectedCall>& selection() const { return selection_; }
  void highlight_function(std::optional<int> function_id);
  const std::optional<int>& highlighted_function() const { return highlighted_function_; }
  // Greys every copy but the selection's and shows the span of the selected copies.
  void select_copies(const CopySelection& selection);
  const std::optional<CopySelection>& copy_selection() const { return copy_selection_; }
  // Blocks until the visible window's calls are loaded; for screenshots and tests.
  void wait_for_data();
  // What hovering over `position` shows; empty over nothing.
  QString describe_at(QPoint position) const;
  QString describe(const SelectedCall& selected) const;

signals:
  void selection_changed(const QString& details);
  void viewport_changed();

protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

private:
  // How near a call, copy or range the cursor may be and still pick it: thin items stay clickable.
  static constexpr double kHitSlackPixels = 2;

  void relayout();
  // Sets the height every row needs (comfortable_height) as the minimum, then lays the rows out.
  void fit_rows();
  int lanes_top() const; // below the ruler and the phase band
  // Where the ruler and the phase band are drawn: the top of the part of the canvas its scroll area
  // shows, so they stay in view while the rows scroll beneath them.
  int header_top() const;
  void set_rank_weight(int rank, double weight);
  void paint_kernel_links(QPainter& painter) const;
  // Tooltip lines of the call's kernels in the window and of its nccl_calls row; empty without.
  QString describe_call_gpu_work(const SelectedCall& selected) const;
  // Tooltip lines naming the kernel, copy or memset in the window that the CUDA API call made.
  QString describe_api_gpu_work(int rank, const analysis::TimelineApiCall& call) const;
  int row_at(int y) const;
  const analysis::TimelineCall* call_at(QPoint position, int* lane_index) const;
  const analysis::TimelineBin* bin_at(QPoint position, int lane_index) const;
  // Text of the copy, range or phase under `position` on an annotation row; empty over nothing.
  QString describe_annotation_at(QPoint position) const;
  // What runtime_ops says about the call: decision, algorithm, why; empty without a row.
  QString describe_runtime_decision(const analysis::TimelineCall& call) const;
  std::vector<const analysis::TimelinePhase*> phases_of(int rank) const;
  void request_window();
  void paint_ruler(QPainter& painter) const;
  void paint_phase_band(QPainter& painter) const;
  void paint_messages(QPainter& painter) const;
  // The phase under `position` in the band, or null.
  const analysis::PhaseStats* phase_in_band_at(QPoint position) const;
  void paint_row(QPainter& painter, std::size_t row_index) const;
  QString row_label(const TimelineRow& row) const;
  void paint_lane(QPainter& painter, const TimelineRow& row, const QRect& area) const;
  QColor color_of(int function_id) const;

  std::shared_ptr<const LoadedDatabase> database_;
  TimelineViewport viewport_;
  TimelineFetcher fetcher_;
  std::vector<TimelineRow> rows_;
  std::vector<int> row_tops_; // one per row, then the bottom of the last
  RankSizing sizing_;
  bool phase_band_ = false;
  std::optional<SelectedCall> selection_;
  std::optional<int> highlighted_function_;
  std::optional<CopySelection> copy_selection_;
  std::optional<QPoint> drag_origin_;
  struct LaneDrag {
    int rank = 0;
    int origin_y = 0;
    int start_height = 0;
  };
  std::optional<LaneDrag> lane_drag_;
  bool dragged_ = false;
};

} // namespace commlens::viewer
