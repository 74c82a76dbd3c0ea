// The timeline over crafted databases whose rows the test states (crafted_databases.hpp): rows per
// rank (ranges, call lanes, a lane per GPU stream), folding and resizing, the overview strip,
// messages, keys, the runtime's calls, the steps it opens on and the legend.
#include "crafted_databases.hpp"
#include "format.hpp"
#include "main_window.hpp"
#include "shown_window.hpp"
#include "timeline_view.hpp"

#include "commlens/analysis/timeline.hpp"

#include <QtTest>

#include <cmath>

using namespace commlens::viewer;
using namespace commlens::viewer::test_support;
namespace analysis = commlens::analysis;

class ViewerTimelineTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { QVERIFY(runs_.directory.isValid()); }

  void timelineGivesEachRankRangeRowsAndALanePerStream() {
    MainWindow window;
    test_support::open_shown(window, runs_.gpu);
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
    const analysis::Database database(runs_.gpu.toStdString());
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
    test_support::open_shown(window, runs_.plain);
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
    test_support::open_shown(window, runs_.gpu);
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

  void overviewShowsTheWholeRunAndMovesTheWindow() {
    MainWindow window;
    test_support::open_shown(window, runs_.plain);
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
    const analysis::Database database(runs_.plain.toStdString());
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
    test_support::open_shown(window, runs_.plain);
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
    test_support::open_shown(window, runs_.plain);
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
    test_support::open_shown(window, runs_.ab);
    auto* canvas = window.timeline()->canvas();
    const analysis::Database database(runs_.ab.toStdString());
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
    test_support::open_shown(window, runs_.gpu);
    QStringList names;
    for (const auto& entry : window.timeline()->legend()->entries())
      names << entry.name;
    QCOMPARE(names, (QStringList{"MPI sends", "MPI receives", "MPI collectives", "compute kernels",
                                 "communication kernels", "copies: host_staged", "copies: ipc",
                                 "copies: peer", "NVTX ranges (by name)"}));
    MainWindow ab;
    test_support::open_shown(ab, runs_.ab);
    QStringList ab_names;
    for (const auto& entry : ab.timeline()->legend()->entries())
      ab_names << entry.name;
    QVERIFY2(ab_names.contains(QStringLiteral("ran in the GPU runtime")), qPrintable(ab_names.join(',')));
  }

private:
  const CraftedRuns runs_;
};

QTEST_MAIN(ViewerTimelineTest)
#include "viewer_timeline_test.moc"
