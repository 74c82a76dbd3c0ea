// The timeline's GPU stream and NVTX range rows and the compare view's implementation comparison,
// over crafted databases whose rows the test states (tests/support/databases/trace_database.cpp holds the
// MPI calls): the query layer and the fetcher return exactly the stored rows of a window.
#include "compare_view.hpp"
#include "copy_paths_view.hpp"
#include "format.hpp"
#include "main_window.hpp"
#include "run_facts.hpp"
#include "shown_window.hpp"
#include "steps_view.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"

#include "commlens/analysis/timeline.hpp"

#include "trace_database.hpp"

#include <QTabWidget>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace commlens::viewer;
namespace analysis = commlens::analysis;
namespace test = commlens::test;

namespace {

// Rank 0: a staged copy issued in MPI call 1 (4 KiB in 1 us: 4.096 GB/s), a peer copy over NVLink
// from device 0 to 1 outside MPI, an IPC copy late in the run; rank 1: one staged copy.
constexpr const char* kCopies = R"sql(
INSERT INTO cuda_copies (rank, start_ns, end_ns, device, src_device, dst_device, src_kind, dst_kind, bytes,
                         stream, copy_kind, path, link, mpi_call_id, correlation_id) VALUES
  (0, 900, 1900, 0, 0, NULL, 'device', 'pinned', 4096, 7, 'DtoH', 'host_staged', NULL, 1, 11),
  (0, 1500, 2500, 0, 0, 1, 'device', 'device', 8192, 8, 'PtoP', 'peer', 'nvlink', NULL, 12),
  (0, 9000, 9500, 0, 0, 0, 'device', 'device', 1000, 7, 'DtoD', 'ipc', NULL, 5, 13),
  (1, 1000, 1200, 1, 1, NULL, 'device', 'pageable', 512, 3, 'DtoH', 'host_staged', NULL, NULL, 14);
)sql";

// The run table of a GPU run; two kernels on rank 0, the second launched in MPI call 1.
constexpr const char* kGpuRun = R"sql(
INSERT INTO run (key, value) VALUES ('cuda_collectors', 'on'), ('nvtx_user_ranges', 'on'),
  ('mpit_sampling', 'none: the MPI library exposes no performance variables');
INSERT INTO cuda_kernels (rank, start_ns, end_ns, device, stream, name, mpi_call_id, correlation_id) VALUES
  (0, 3000, 3400, 0, 7, 'pack_halo', NULL, 21), (0, 6000, 7000, 0, 7, 'reduce_kernel', 1, 22);
)sql";

// What the runtime decided for the four runtime:ring calls (ids 2000 to 2003) of the A/B run.
constexpr const char* kRuntimeOps = R"sql(
INSERT INTO runtime_ops (rank, mpi_call_id, function_id, comm_id, start_ns, end_ns, implementation, algorithm,
                         decision, reason, bytes, bytes_peer, bytes_host, ipc_opens, chunks, streams,
                         decision_source)
SELECT rank, id, function_id, comm_id, start_ns, end_ns, implementation, 'ring', 'runtime', NULL, 64, 48, 0,
       1, 1, 1, 'table:h100 rule 2' FROM mpi_calls WHERE implementation = 1;
)sql";

// Rank 0: "step" encloses "halo", which encloses "pack"; "solve" in the default domain after them.
// Rank 0 enters phase 1 at 5000 (MPI_Pcontrol(2)).
constexpr const char* kRanges = R"sql(
INSERT INTO nvtx_ranges (rank, start_ns, end_ns, domain, name) VALUES
  (0, 800, 5000, 'app', 'step'), (0, 1000, 2000, 'app', 'halo'), (0, 1100, 1200, 'app', 'pack'),
  (0, 6000, 7000, NULL, 'solve');
UPDATE phases SET end_ns = 5000 WHERE rank = 0 AND phase = 0;
INSERT INTO phases (rank, phase, start_ns, end_ns, pcontrol_level) VALUES (0, 1, 5000, NULL, 2);
)sql";

// Two training steps on both ranks: phase 1 [2000, 6000) and phase 2 [6000, 8000) opened by
// MPI_Pcontrol(2), phase 3 (tear-down) left open. Each rank spends 1000 ns in one MPI_Allreduce of
// 64 B per step. Kernels were recorded in step 2 only: on each rank a compute kernel [6000, 7000)
// and NCCL's [6500, 7500): compute 1 us, communication 1 us of which half overlapped, idle 0.5 us.
constexpr const char* kSteps = R"sql(
UPDATE phases SET end_ns = 2000 WHERE phase = 0;
INSERT INTO phases (rank, phase, start_ns, end_ns, pcontrol_level) VALUES
  (0, 1, 2000, 6000, 2), (1, 1, 2000, 6000, 2), (0, 2, 6000, 8000, 2), (1, 2, 6000, 8000, 2),
  (0, 3, 8000, NULL, 2), (1, 3, 8000, NULL, 2);
INSERT INTO call_stats VALUES
  (0, 4, 0, 6, -1, 1, 1, 64, 64, 1000, 1000, 1000), (1, 4, 0, 6, -1, 1, 1, 64, 64, 1000, 1000, 1000),
  (0, 4, 0, 6, -1, 2, 1, 64, 64, 1000, 1000, 1000), (1, 4, 0, 6, -1, 2, 1, 64, 64, 1000, 1000, 1000);
INSERT INTO kernel_recording VALUES (0, 6000, 8000), (1, 6000, 8000);
INSERT INTO cuda_kernels VALUES (0, 6000, 7000, 0, 7, 'gemm', NULL, 1), (0, 6500, 7500, 0, 8, 'ncclDevKernel_AllReduce', NULL, 2),
  (1, 6000, 7000, 0, 7, 'gemm', NULL, 1), (1, 6500, 7500, 0, 8, 'ncclDevKernel_AllReduce', NULL, 2);
)sql";

QString crafted_database(const QString& directory, const char* name, bool gpu, bool implementations,
                         bool steps = false) {
  const auto path = QDir(directory).filePath(QLatin1String(name));
  test::TestDatabase database(path.toStdString());
  test::fill_trace_run(database);
  if (gpu) {
    database.execute(kCopies);
    database.execute(kRanges);
    database.execute(kGpuRun);
  }
  if (steps)
    database.execute(kSteps);
  if (implementations) {
    test::add_runtime_implementation_calls(database);
    database.execute(kRuntimeOps);
  }
  return path;
}

bool all_of_unit(const QStringList& labels, const QString& unit) {
  return !labels.isEmpty() && std::all_of(labels.begin(), labels.end(),
                                          [&](const QString& label) { return label.endsWith(unit); });
}

std::vector<std::int64_t> starts_of(const auto& items) {
  std::vector<std::int64_t> starts;
  for (const auto& item : items)
    starts.push_back(item.start_ns);
  return starts;
}

} // namespace

class ViewerCraftedTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY(directory_.isValid());
    gpu_ = crafted_database(directory_.path(), "gpu.sqlite", true, false);
    ab_ = crafted_database(directory_.path(), "ab.sqlite", false, true);
    plain_ = crafted_database(directory_.path(), "plain.sqlite", false, false);
    steps_ = crafted_database(directory_.path(), "steps.sqlite", false, false, true);
  }

  void queriesReturnTheStoredRowsOfAWindow() {
    const analysis::Database database(gpu_.toStdString());
    // [2000, 9200) holds the peer copy (it reaches in from 1500) and the IPC copy, not the staged one.
    const auto copies = analysis::query_timeline_copies(database, 0, 2000, 9200);
    QCOMPARE(starts_of(copies), (std::vector<std::int64_t>{1500, 9000}));
    QCOMPARE(copies[0].path, std::string("peer"));
    QCOMPARE(copies[0].link, std::optional<std::string>("nvlink"));
    QCOMPARE(copies[0].src_device, std::optional<int>(0));
    QCOMPARE(copies[0].dst_device, std::optional<int>(1));
    QCOMPARE(copies[0].bytes, std::int64_t{8192});
    QCOMPARE(copies[0].mpi_call_id, std::optional<std::int64_t>());
    QCOMPARE(copies[1].mpi_call_id, std::optional<std::int64_t>(5));
    const auto whole = analysis::query_timeline_copies(database, 0, 0, 100000);
    QCOMPARE(whole.size(), std::size_t{3});
    QCOMPARE(whole[0].gb_per_s().value_or(0), 4.096);
    QCOMPARE(whole[0].dst_device, std::optional<int>());
    QCOMPARE(whole[0].link, std::optional<std::string>());
    QCOMPARE(analysis::query_timeline_copies(database, 1, 0, 100000).size(), std::size_t{1});
    QVERIFY(analysis::query_timeline_copies(database, 0, 2500, 9000).empty()); // the edges are open

    const auto ranges = analysis::query_timeline_ranges(database, 0, 1150, 6500);
    QCOMPARE(starts_of(ranges), (std::vector<std::int64_t>{800, 1000, 1100, 6000}));
    QCOMPARE(ranges[0].name, std::string("step"));
    QCOMPARE(ranges[0].domain, std::optional<std::string>("app"));
    QCOMPARE(ranges[1].depth, 1);
    QCOMPARE(ranges[2].depth, 2);
    QCOMPARE(ranges[3].depth, 0);
    QCOMPARE(ranges[3].domain, std::optional<std::string>());
    QCOMPARE(analysis::query_timeline_ranges(database, 0, 2000, 4000).size(), std::size_t{1});
    QVERIFY(analysis::query_timeline_ranges(database, 1, 0, 100000).empty());

    const auto phases = analysis::query_timeline_phases(database);
    QCOMPARE(phases.size(), std::size_t{3});
    QCOMPARE(phases[1].phase, 1);
    QCOMPARE(phases[1].start_ns, std::int64_t{5000});
    QVERIFY(!phases[1].end_ns);
    const auto extent = analysis::query_timeline_extent(database);
    QVERIFY(extent.has_copies && extent.has_ranges);
  }

  void timelineGivesEachRankRangeRowsAndALanePerStream() {
    MainWindow window;
    test_support::open_shown(window, gpu_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    canvas->show_range(2000, 9200);
    canvas->wait_for_data();
    using Kind = TimelineRowKind;
    std::vector<std::pair<Kind, int>> layout;
    for (const auto& row : canvas->rows())
      layout.emplace_back(row.kind, row.rank);
    // Rank 0 calls from two threads: two call lanes under its range row, then its streams 7 (a
    // staged and an IPC copy, two kernels) and 8 (the peer copy); rank 1 copied on stream 3.
    QCOMPARE(layout, (std::vector<std::pair<Kind, int>>{{Kind::Ranges, 0},
                                                        {Kind::Calls, 0},
                                                        {Kind::Calls, 0},
                                                        {Kind::Stream, 0},
                                                        {Kind::Stream, 0},
                                                        {Kind::Ranges, 1},
                                                        {Kind::Calls, 1},
                                                        {Kind::Stream, 1}}));
    const auto& streams = window.database()->gpu_streams;
    QCOMPARE(streams.size(), std::size_t{3});
    QCOMPARE(streams[0].stream, std::optional<std::int64_t>(7));
    QCOMPARE(streams[0].copies, std::uint64_t{2});
    QCOMPARE(streams[0].compute_kernels, std::uint64_t{1});
    QCOMPARE(streams[0].communication_kernels, std::uint64_t{1}); // launched in MPI call 1
    QCOMPARE(streams[1].stream, std::optional<std::int64_t>(8));
    QCOMPARE(streams[2].device, std::optional<int>(1));
    // The fetcher asks for a quarter of the span beyond each edge: [ -50, 11250 ) here; each stream's
    // lane holds the stored rows of its stream.
    const auto& snapshot = canvas->fetcher().snapshot();
    const analysis::Database database(gpu_.toStdString());
    QCOMPARE(snapshot.streams.size(), std::size_t{3});
    QCOMPARE(starts_of(snapshot.streams[0].copies), (std::vector<std::int64_t>{900, 9000}));
    QCOMPARE(starts_of(snapshot.streams[1].copies), (std::vector<std::int64_t>{1500}));
    QCOMPARE(starts_of(snapshot.streams[2].copies), (std::vector<std::int64_t>{1000}));
    QCOMPARE(analysis::query_timeline_copies(database, 0, snapshot.start_ns, snapshot.end_ns).size(),
             snapshot.streams[0].copies.size() + snapshot.streams[1].copies.size());
    QCOMPARE(snapshot.ranges[0].size(), std::size_t{4});
    QCOMPARE(snapshot.streams[0].kernels.size(), std::size_t{2});
    QCOMPARE(snapshot.streams[0].kernels[1].short_name, QStringLiteral("reduce_kernel"));
    QVERIFY(snapshot.streams[0].kernels[1].communication);
    QVERIFY(!snapshot.streams[0].kernels[0].communication);
    QVERIFY(snapshot.streams[1].kernels.empty());

    const auto point_at = [&](std::size_t row, std::int64_t time_ns, int dy = 0) {
      return QPoint(TimelineCanvas::kGutterWidth + static_cast<int>(canvas->viewport().x_of(time_ns)),
                    canvas->row_rect(row).center().y() + dy);
    };
    const auto ipc = canvas->describe_at(point_at(3, 9250));
    QVERIFY2(ipc.contains(QStringLiteral("ipc, device to device")), qPrintable(ipc));
    QVERIFY2(ipc.contains(QStringLiteral("MPI call id 5")), qPrintable(ipc));
    QVERIFY2(ipc.contains(QStringLiteral("at 2 GB/s while copying")), qPrintable(ipc));
    const auto peer = canvas->describe_at(point_at(4, 2400));
    QVERIFY2(peer.contains(QStringLiteral("peer (nvlink), peer to peer")) &&
                 peer.contains(QStringLiteral("0 &rarr; 1")),
             qPrintable(peer));
    QVERIFY2(peer.contains(QStringLiteral("outside MPI calls")), qPrintable(peer));
    const auto staged = describe_copy(snapshot.streams[0].copies[0], 0, 0);
    QVERIFY2(staged.contains(QStringLiteral("host_staged, device to host, pinned")), qPrintable(staged));
    // The range row of rank 0 stacks three levels: "step" on top.
    const auto top = canvas->row_rect(0).top() + 2;
    const auto step = canvas->describe_at(QPoint(point_at(0, 3000).x(), top));
    QVERIFY2(step.contains(QStringLiteral("<b>step</b>")) && step.contains(QStringLiteral("domain app")),
             qPrintable(step));
    const auto solve = canvas->describe_at(QPoint(point_at(0, 6500).x(), top));
    QVERIFY2(solve.contains(QStringLiteral("domain default")), qPrintable(solve));
    const auto phase = canvas->describe_at(QPoint(point_at(0, 8000).x(), top));
    QVERIFY2(phase.contains(QStringLiteral("phase 1")), qPrintable(phase));
    const auto kernel = canvas->describe_at(point_at(3, 6500));
    QVERIFY2(kernel.contains(QStringLiteral("<b>reduce_kernel</b> &middot; communication kernel")) &&
                 kernel.contains(QStringLiteral("launched in call id 1")),
             qPrintable(kernel));
    QVERIFY(canvas->describe_at(point_at(3, 5000)).isEmpty());
    // The lane's name tells what the stream held over the run.
    const auto lane = canvas->describe_at(QPoint(10, canvas->row_rect(3).center().y()));
    QVERIFY2(lane.contains(QStringLiteral("<b>GPU0 s7</b>: rank 0, stream 7")) &&
                 lane.contains(QStringLiteral("1 compute kernels, 1 communication kernels, 2 copies")),
             qPrintable(lane));
    // Clicking a copy shows its details without selecting a call.
    QSignalSpy details(canvas, &TimelineCanvas::selection_changed);
    QVERIFY(!canvas->select_at(point_at(3, 9250)));
    QCOMPARE(details.size(), 1);
    QCOMPARE(details.first().first().toString(), ipc);
  }

  void timelineWithoutGpuDataHasOnlyCallLanesFillingTheHeight() {
    MainWindow window;
    test_support::open_shown(window, plain_);
    window.show_view(QStringLiteral("timeline"));
    const auto* canvas = window.timeline()->canvas();
    const auto rows = canvas->rows().size();
    QCOMPARE(rows, window.database()->timeline.lanes.size());
    const int lane = canvas->row_rect(0).height();
    QVERIFY2(lane > 100, qPrintable(QString::number(lane))); // three lanes in about 600 pixels
    QCOMPARE(canvas->row_rect(1).height(), lane);
    QVERIFY(canvas->height() - canvas->row_rect(rows - 1).bottom() <= static_cast<int>(rows) + 3);
  }

  void collapsingARankShrinksItsRowsAndGivesTheOthersTheHeight() {
    MainWindow window;
    test_support::open_shown(window, gpu_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    const int before = canvas->row_rect(6).height(); // rank 1's lane
    canvas->toggle_collapsed(0);
    QVERIFY(canvas->collapsed(0));
    QCOMPARE(canvas->row_rect(0).height(), 0); // its ranges and stream rows are folded away
    QCOMPARE(canvas->row_rect(3).height(), 0);
    QCOMPARE(canvas->row_rect(1).height(), kCollapsedLaneHeight);
    QVERIFY(canvas->row_rect(6).height() > before);
    canvas->toggle_collapsed(0);
    QCOMPARE(canvas->row_rect(6).height(), before);
    // Ctrl+wheel up over rank 1's lane: 1.25 times its share per notch, two notches.
    const QPointF over_rank_one = canvas->row_rect(6).center();
    QWheelEvent wheel(over_rank_one, canvas->mapToGlobal(over_rank_one), {}, {0, 240}, Qt::NoButton,
                      Qt::ControlModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(canvas, &wheel);
    const double share = 1.25 * 1.25;
    QVERIFY2(std::abs(canvas->row_rect(6).height() - share * canvas->row_rect(1).height()) <= 2,
             qPrintable(QStringLiteral("%1 against %2")
                            .arg(canvas->row_rect(6).height())
                            .arg(canvas->row_rect(1).height())));
  }

  void stepsGetABarEachSplitIntoMpiAndTheRest() {
    MainWindow window;
    test_support::open_shown(window, steps_);
    const auto& steps = *window.steps();
    QVERIFY2(steps.status().startsWith(QStringLiteral("2 steps on 2 ranks")), qPrintable(steps.status()));
    QVERIFY2(steps.status().contains(QStringLiteral("GPU in steps 2: compute 1 us, communication 1 us (50 % "
                                                    "overlapped), exposed 500 ns, idle 500 ns")),
             qPrintable(steps.status()));
    const auto& bars = steps.chart().bars();
    QCOMPARE(bars.size(), std::size_t{2});
    // Step 1: 4 us, of which 1 us per rank in MPI_Allreduce; step 2: 2 us, 1 us of it in MPI.
    std::vector<std::pair<QString, double>> step_one;
    for (const auto& segment : bars[0].segments)
      step_one.emplace_back(segment.name, segment.value);
    QCOMPARE(step_one, (std::vector<std::pair<QString, double>>{{"outside MPI (compute)", 3000},
                                                                {"MPI_Allreduce", 1000}}));
    QCOMPARE(bars[1].label, QStringLiteral("step 2"));
    QCOMPARE(bars[1].total(), 2000.0);
    QCOMPARE(steps.function_rows(), 1);
    // The GPU of step 2, the one step whose kernels were recorded: compute alone 500 ns, overlapped
    // by communication 500 ns, communication alone 500 ns, idle 500 ns; step 1 has no figures.
    const auto& gpu = steps.gpu_chart().bars();
    QCOMPARE(gpu.size(), std::size_t{1});
    QCOMPARE(gpu[0].label, QStringLiteral("step 2"));
    std::vector<std::pair<QString, double>> split;
    for (const auto& segment : gpu[0].segments)
      split.emplace_back(segment.name, segment.value);
    QCOMPARE(split, (std::vector<std::pair<QString, double>>{{"compute", 500},
                                                             {"overlapped communication", 500},
                                                             {"exposed communication", 500},
                                                             {"idle", 500}}));
    QCOMPARE(steps.gpu_headers(), (QStringList{"GPU, mean over ranks", "step 1", "step 2"}));
    QCOMPARE(steps.gpu_cell(0, 0), QStringLiteral("compute"));
    QCOMPARE(steps.gpu_cell(0, 1), QStringLiteral("-"));
    QCOMPARE(steps.gpu_cell(0, 2), format_duration(1000));
    QCOMPARE(steps.gpu_cell(3, 0), QStringLiteral("exposed communication"));
    QCOMPARE(steps.gpu_cell(3, 2), format_duration(500));
    // The summary gives the calls' time inside the steps: 1 us per rank and step.
    QVERIFY2(window.summary()->headline().contains(QStringLiteral("in the 2 training steps 4 us")),
             qPrintable(window.summary()->headline()));

    // The timeline opens on the steps and names them in its band of phases; the run without steps
    // has no band.
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    QCOMPARE(canvas->viewport().start_ns(), std::int64_t{2000});
    QCOMPARE(canvas->viewport().end_ns(), std::int64_t{8000});
    // The set-up is folded to a chip; clicking it shows the set-up from the trace's start.
    const auto chip = canvas->setup_chip();
    QVERIFY(chip.has_value());
    QVERIFY2(canvas->describe_at(chip->center().toPoint()).contains(QStringLiteral("<b>set-up</b>")),
             qPrintable(canvas->describe_at(chip->center().toPoint())));
    QTest::mouseClick(canvas, Qt::LeftButton, {}, chip->center().toPoint());
    QCOMPARE(canvas->viewport().start_ns(), window.database()->timeline.start_ns);
    QCOMPARE(canvas->viewport().end_ns(), std::int64_t{8000});
    QVERIFY(!canvas->setup_chip());
    // Double-clicking a step in the band shows all of it.
    const QPoint on_step_two(TimelineCanvas::kGutterWidth + static_cast<int>(canvas->viewport().x_of(7000)),
                             TimelineCanvas::kRulerHeight + TimelineCanvas::kPhaseBandHeight / 2);
    QTest::mouseDClick(canvas, Qt::LeftButton, {}, on_step_two);
    QCOMPARE(canvas->viewport().start_ns(), std::int64_t{6000});
    QCOMPARE(canvas->viewport().end_ns(), std::int64_t{8000});
    canvas->show_all();
    QVERIFY(canvas->phase_band_height() > 0);
    const auto band_y = TimelineCanvas::kRulerHeight + canvas->phase_band_height() / 2;
    const auto at = [&](std::int64_t time_ns) {
      return QPoint(TimelineCanvas::kGutterWidth + static_cast<int>(canvas->viewport().x_of(time_ns)),
                    band_y);
    };
    const auto step = canvas->describe_at(at(7000));
    QVERIFY2(step.contains(QStringLiteral("<b>step 2</b>")) && step.contains(QStringLiteral("on 2 ranks")),
             qPrintable(step));
    QVERIFY2(canvas->describe_at(at(9000)).contains(QStringLiteral("<b>tear-down</b> (phase 3)")),
             qPrintable(canvas->describe_at(at(9000))));
    QVERIFY2(canvas->describe_at(at(1000)).contains(QStringLiteral("<b>set-up</b> (phase 0)")),
             qPrintable(canvas->describe_at(at(1000))));
    QVERIFY(canvas->row_rect(0).top() >= band_y);
    MainWindow plain;
    test_support::open_shown(plain, plain_);
    QCOMPARE(plain.timeline()->canvas()->phase_band_height(), 0);
  }

  void overviewShowsTheWholeRunAndMovesTheWindow() {
    MainWindow window;
    test_support::open_shown(window, plain_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    auto* overview = window.timeline()->overview();
    // Rank 0's thread 1 is in MPI_Allreduce from 500 to 3500; no lane calls MPI from 4150 to 10000.
    const auto& loaded = *window.database();
    overview->wait_for_data();
    const auto& activity = overview->activity();
    QVERIFY(!activity.empty());
    const auto slice_of = [&](std::int64_t time_ns) {
      return static_cast<std::size_t>(static_cast<double>(time_ns - loaded.timeline.start_ns) *
                                      activity.size() /
                                      static_cast<double>(loaded.timeline.end_ns - loaded.timeline.start_ns));
    };
    QVERIFY(activity[slice_of(2000)] >= 1.0 / 3); // one lane of three at least
    for (auto slice = slice_of(4200); slice < slice_of(9900); ++slice)
      QCOMPARE(activity[slice], 0.0);
    canvas->zoom(8, TimelineCanvas::kGutterWidth);
    const auto span = canvas->viewport().span_ns();
    const int x = overview->width() * 3 / 4;
    QTest::mouseClick(overview, Qt::LeftButton, {}, QPoint(x, overview->height() / 2));
    const auto middle = canvas->viewport().start_ns() + span / 2;
    QVERIFY2(std::llabs(middle - overview->time_at(x)) <= span / 100,
             qPrintable(QStringLiteral("%1 vs %2").arg(middle).arg(overview->time_at(x))));
    QCOMPARE(canvas->viewport().span_ns(), span);
    const auto marker = overview->window_marker();
    QVERIFY(marker.left() <= x && x <= marker.right());
  }

  void messagesMatchSendsWithReceivesInMpiOrder() {
    const analysis::Database database(plain_.toStdString());
    // Rank 0 sends 4 messages with tag 7 at 1000, 2000, 3000, 4000; rank 1 receives them at 1050,
    // 2050, 3050, 4050 (100 ns each). The Isends with tag 9 have no receive.
    const auto pairs = [&](std::int64_t start_ns, std::int64_t end_ns) {
      std::vector<std::pair<std::int64_t, std::int64_t>> matched;
      for (const auto& message : analysis::query_timeline_messages(database, start_ns, end_ns, 100))
        if (message.sender == analysis::TimelineLane{0, 0} &&
            message.receiver == analysis::TimelineLane{1, 0} && message.bytes == 1024)
          matched.emplace_back(message.send_ns, message.received_ns);
        else
          matched.emplace_back(-1, -1); // from or to the wrong lane, or the wrong size
      return matched;
    };
    using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;
    QCOMPARE(pairs(2500, 5000), (Pairs{{3000, 3150}, {4000, 4150}}));
    // The window holds the receives of 2050 to 4050 but the sends of 3000 and 4000 only: counting
    // from the run's start pairs 3000 with 3050, not with 2050.
    QCOMPARE(pairs(2020, 4100), (Pairs{{3000, 3150}, {4000, 4150}}));
    QCOMPARE(pairs(1900, 3020), (Pairs{{2000, 2150}}));
    QVERIFY(analysis::query_timeline_messages(database, 0, 100000, 3).empty()); // too many to draw

    MainWindow window;
    test_support::open_shown(window, plain_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    canvas->show_range(2500, 5000);
    canvas->wait_for_data();
    // The fetcher reads a quarter of the span beyond each edge, [1875, 5625): three messages.
    const auto lines = canvas->message_lines();
    QCOMPARE(lines.size(), std::size_t{3});
    // From rank 0's first lane at the send to rank 1's lane at the receive's end.
    QCOMPARE(lines[1].p1().y(), double(canvas->row_rect(0).center().y()));
    QCOMPARE(lines[1].p2().y(), double(canvas->row_rect(2).center().y()));
    QCOMPARE(lines[1].p1().x(), TimelineCanvas::kGutterWidth + canvas->viewport().x_of(3000));
    QCOMPARE(lines[1].p2().x(), TimelineCanvas::kGutterWidth + canvas->viewport().x_of(3150));
    canvas->show_all(); // 30 calls in all: still few enough to draw their messages
    canvas->wait_for_data();
    QCOMPARE(canvas->message_lines().size(), std::size_t{4});
  }

  void rulerLabelsTellNeighbouringTicksApart() {
    QCOMPARE(format_position(176'450'000, 50'000), QStringLiteral("176.45 ms"));
    QCOMPARE(format_position(176'500'000, 50'000), QStringLiteral("176.50 ms"));
    QCOMPARE(format_position(2'000'000'000, 500'000'000), QStringLiteral("2.0 s"));
    QCOMPARE(format_position(40'000'000, 20'000'000), QStringLiteral("40 ms"));
    QCOMPARE(format_position(0, 1000), QStringLiteral("0 ns"));
  }

  void keysZoomAndPanLikePerfetto() {
    MainWindow window;
    test_support::open_shown(window, plain_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    const auto span = canvas->viewport().span_ns();
    QTest::keyClick(canvas, Qt::Key_W);
    QVERIFY(canvas->viewport().span_ns() < span * 0.7);
    const auto start = canvas->viewport().start_ns();
    QTest::keyClick(canvas, Qt::Key_D);
    QVERIFY(canvas->viewport().start_ns() > start);
    QTest::keyClick(canvas, Qt::Key_A);
    QVERIFY(std::llabs(canvas->viewport().start_ns() - start) <= 2);
    QTest::keyClick(canvas, Qt::Key_S);
    QVERIFY(std::llabs(canvas->viewport().span_ns() - span) <= 2);
  }

  void runtimeCallsAreHatchedAndSayWhatTheRuntimeDecided() {
    MainWindow window;
    test_support::open_shown(window, ab_);
    auto* canvas = window.timeline()->canvas();
    const analysis::Database database(ab_.toStdString());
    const auto window_calls = analysis::query_timeline_window(database, {0, 0}, 20000, 40000, 1).calls;
    QCOMPARE(window_calls.size(), std::size_t{8});
    const auto& baseline = window_calls.front(); // implementation mpi, at 20000
    const auto& runtime = window_calls.back();   // runtime:ring, at 36000
    QCOMPARE(canvas->style_of(baseline), ImplementationStyle::Mpi);
    QCOMPARE(canvas->style_of(runtime), ImplementationStyle::Runtime);
    QCOMPARE(implementation_style(QStringLiteral("mpi:host_staged")), ImplementationStyle::Baseline);
    const auto runtime_text = canvas->describe({{0, 0}, runtime});
    QVERIFY2(runtime_text.contains(QStringLiteral("decision <b>runtime</b>, algorithm ring")) &&
                 runtime_text.contains(QStringLiteral("chosen by table:h100 rule 2")) &&
                 runtime_text.contains(QStringLiteral("48B loaded from peers")),
             qPrintable(runtime_text));
    QVERIFY(!canvas->describe({{0, 0}, baseline}).contains(QStringLiteral("GPU runtime")));
  }

  void legendNamesTheColourFamiliesTheRunUses() {
    MainWindow window;
    test_support::open_shown(window, gpu_);
    QStringList names;
    for (const auto& entry : window.timeline()->legend()->entries())
      names << entry.name;
    QCOMPARE(names, (QStringList{"MPI sends", "MPI receives", "MPI collectives", "compute kernels",
                                 "communication kernels", "copies: host_staged", "copies: ipc",
                                 "copies: peer", "NVTX ranges (by name)"}));
    MainWindow ab;
    test_support::open_shown(ab, ab_);
    QStringList ab_names;
    for (const auto& entry : ab.timeline()->legend()->entries())
      ab_names << entry.name;
    QVERIFY2(ab_names.contains(QStringLiteral("ran in the GPU runtime")), qPrintable(ab_names.join(',')));
  }

  void summaryOfAGpuRunNamesItsCollectorsAndCopyPaths() {
    MainWindow window;
    test_support::open_shown(window, gpu_);
    const auto& summary = *window.summary();
    QCOMPARE(summary.collectors(),
             QStringLiteral(
                 "MPI calls (trace) \u00b7 MPI_T off (the MPI library exposes no performance variables) "
                 "\u00b7 CUDA on \u00b7 NVTX ranges on"));
    // A job whose first NCCL call started the profiler never initialised MPI: the line says so.
    QCOMPARE(collectors_line({{"mode", "trace"},
                              {"mpi_library_version", "MPI not initialised: NCCL started the profiler"},
                              {"cuda_collectors", "on"}}),
             QStringLiteral("NCCL calls, MPI not initialised (trace) \u00b7 CUDA on"));
    // Bytes per path, most first: peer 8 KiB, host_staged 4 KiB + 512 B, ipc 1000 B.
    std::vector<std::pair<QString, double>> paths;
    for (const auto& bar : summary.copy_chart().bars())
      paths.emplace_back(bar.label, bar.total());
    QCOMPARE(paths,
             (std::vector<std::pair<QString, double>>{{"peer", 8192}, {"host_staged", 4608}, {"ipc", 1000}}));
    QCOMPARE(summary.copy_chart().tick_labels().last(), QStringLiteral("8KiB"));
    // Two ranks split by function: rank 0 Send, Isend, Allreduce; rank 1 Recv.
    QCOMPARE(summary.rank_chart().bars().size(), std::size_t{2});
    QCOMPARE(summary.rank_chart().bars()[0].total(), 400.0 + 40 + 3000);
    QCOMPARE(summary.rank_chart().bars()[0].segments.size(), std::size_t{3});
  }

  void copyPathsListEachPathRankAndGpuWithBandwidth() {
    MainWindow window;
    test_support::open_shown(window, gpu_);
    const auto& paths = *window.paths();
    QCOMPARE(paths.rows(), 4);
    const auto row = [&](int index) {
      QStringList cells;
      for (int column = 0; column < 9; ++column)
        cells << paths.cell(index, column);
      return cells.join(QLatin1Char('|'));
    };
    // host_staged device to host: 512 B in 200 ns into pageable memory on rank 1, 4 KiB in 1 us
    // into pinned memory on rank 0 (one route each); ipc 1000 B in 500 ns; peer over NVLink 8 KiB in 1 us.
    QCOMPARE(row(0), QStringLiteral("host_staged|DtoH|pageable|1|1|1|512B|200 ns|2.56 GB/s"));
    QCOMPARE(row(1), QStringLiteral("host_staged|DtoH|pinned|0|0|1|4KiB|1 us|4.1 GB/s"));
    QCOMPARE(row(2), QStringLiteral("ipc|DtoD|-|0|0|1|1000B|500 ns|2 GB/s"));
    QCOMPARE(row(3), QStringLiteral("peer (nvlink)|PtoP|-|0|0|1|8KiB|1 us|8.19 GB/s"));
    QVERIFY2(paths.status().contains(QStringLiteral("<b>Bandwidth while copying</b>: a row's bytes over its "
                                                    "copies' own summed durations")),
             qPrintable(paths.status()));
    QCOMPARE(paths.bandwidth_chart().bars().size(), std::size_t{4});
    QCOMPARE(paths.bandwidth_chart().bars()[3].total(), 8.192);
    QCOMPARE(paths.bandwidth_chart().bars()[0].label,
             QStringLiteral("host_staged DtoH pageable \u00b7 rank 1, GPU 1"));
    QVERIFY(all_of_unit(paths.bandwidth_chart().tick_labels(), QStringLiteral(" GB/s")));
    // Throughput over the run: one line per route, each slice's bytes over the slice.
    const auto& series = paths.over_time_chart().series();
    QCOMPARE(series.size(), std::size_t{4});
    QCOMPARE(series[0].name, QStringLiteral("host_staged DtoH pageable"));
    QVERIFY(series[0].style != series[1].style); // one path, two routes: told apart by the line
    const double slice_ns =
        std::ceil(double(window.database()->timeline.end_ns - window.database()->timeline.start_ns) /
                  CopyPathsView::kTimeSlices);
    QCOMPARE(*std::max_element(series[3].values.begin(), series[3].values.end()), 8192 / slice_ns);
    QVERIFY(all_of_unit(paths.over_time_chart().time_tick_labels(), QStringLiteral("s")));

    // Clicking the peer route's row shows its copy (rank 0, 1500 to 2500) in the timeline, the others greyed.
    window.paths()->choose_row(3);
    QCOMPARE(window.findChild<QTabWidget*>()->currentWidget(), static_cast<QWidget*>(window.timeline()));
    const auto* canvas = window.timeline()->canvas();
    QVERIFY(canvas->copy_selection());
    QVERIFY(canvas->viewport().start_ns() <= 1500 && canvas->viewport().end_ns() >= 2500);
    QVERIFY(canvas->viewport().span_ns() < 2000); // zoomed in on it, not the whole run
    const analysis::Database database(gpu_.toStdString());
    std::vector<std::int64_t> chosen;
    for (const auto& copy : analysis::query_timeline_copies(database, 0, 0, 100000))
      if (canvas->copy_selection()->contains(copy, 0))
        chosen.push_back(copy.start_ns);
    QCOMPARE(chosen, (std::vector<std::int64_t>{1500}));
  }

  void compareShowsTheImplementationsOfAnAbRun() {
    MainWindow window;
    test_support::open_shown(window, ab_);
    window.show_view(QStringLiteral("compare"));
    auto* compare = window.compare();
    compare->wait_for_implementations();
    QVERIFY2(compare->status().contains(QStringLiteral("B = <b>runtime:ring</b>")),
             qPrintable(compare->status()));
    // mpi: four Allreduce of 1000 ns plus the crafted run's one of 3000 ns; runtime:ring: four of 500 ns.
    const auto* allreduce = compare->model().function_row(QStringLiteral("MPI_Allreduce"));
    QVERIFY(allreduce);
    QCOMPARE(allreduce->calls_a, std::uint64_t{5});
    QCOMPARE(allreduce->calls_b, std::uint64_t{4});
    QCOMPARE(allreduce->time_a_ns, std::int64_t{7000});
    QCOMPARE(allreduce->time_b_ns, std::int64_t{2000});
    QCOMPARE(allreduce->mean_time_ratio().value_or(0), 500.0 / 1400.0);
    const auto* bin =
        compare->model().size_row(QStringLiteral("MPI_Allreduce"), QStringLiteral("[64B, 128B)"));
    QVERIFY(bin);
    QCOMPARE(bin->median_ratio.value_or(0), 0.5);
    QCOMPARE(compare->model().columnCount(), int(CompareModel::ColumnCount)); // medians shown
    // Short headers, whole; the sides' names in each header's tooltip.
    QCOMPARE(compare->model().headerData(CompareModel::MeanA, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("Mean time A"));
    QCOMPARE(compare->model().headerData(CompareModel::Ratio, Qt::Horizontal, Qt::ToolTipRole).toString(),
             QStringLiteral("A = mpi, B = runtime:ring"));
    // Functions only mpi ran have no runtime side.
    const auto* send = compare->model().function_row(QStringLiteral("MPI_Send"));
    QVERIFY(send);
    QCOMPARE(send->calls_b, std::uint64_t{0});
    QVERIFY(!send->mean_time_ratio());
  }

  void compareOfARunWithOneImplementationWaitsForASecondDatabase() {
    MainWindow window;
    test_support::open_shown(window, plain_);
    window.show_view(QStringLiteral("compare"));
    window.compare()->wait_for_implementations();
    QVERIFY(window.compare()->status().contains(QStringLiteral("Open a second database")));
    QCOMPARE(window.compare()->model().function_row(QStringLiteral("MPI_Send"))->calls_b, std::uint64_t{0});
    QCOMPARE(window.compare()->model().columnCount(), int(CompareModel::MedianRatio)); // no medians
  }

private:
  QTemporaryDir directory_;
  QString gpu_, ab_, plain_, steps_;
};

QTEST_MAIN(ViewerCraftedTest)
#include "viewer_crafted_test.moc"
