// The viewer's summary, steps, copy paths and compare views and the queries beneath them, over
// crafted databases whose rows the test states (crafted_databases.hpp): the query layer returns
// exactly the stored rows, and each view shows what they say.
#include "compare_view.hpp"
#include "copy_paths_view.hpp"
#include "crafted_databases.hpp"
#include "format.hpp"
#include "main_window.hpp"
#include "run_facts.hpp"
#include "shown_window.hpp"
#include "steps_view.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"

#include "commlens/analysis/timeline.hpp"

#include <QTabWidget>
#include <QTreeWidget>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace commlens::viewer;
using namespace commlens::viewer::test_support;
namespace analysis = commlens::analysis;

class ViewerCraftedTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { QVERIFY(runs_.directory.isValid()); }

  void queriesReturnTheStoredRowsOfAWindow() {
    const analysis::Database database(runs_.gpu.toStdString());
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
    QVERIFY(extent.has_ranges);
  }

  void stepsGetABarEachSplitIntoMpiAndTheRest() {
    MainWindow window;
    test_support::open_shown(window, runs_.steps);
    const auto& steps = *window.steps();
    QVERIFY2(steps.status().startsWith(QStringLiteral("2 steps on 2 ranks")), qPrintable(steps.status()));
    QVERIFY2(steps.status().contains(QStringLiteral("GPU in steps 2: compute 1 us, communication 1 us (50 % "
                                                    "overlapped), exposed 500 ns, idle 500 ns")),
             qPrintable(steps.status()));
    QVERIFY2(steps.status().contains(QStringLiteral("commlens on the copying threads 60 ns per step")),
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
    test_support::open_shown(plain, runs_.plain);
    QCOMPARE(plain.timeline()->canvas()->phase_band_height(), 0);
  }

  void summaryOfAGpuRunNamesItsCollectorsAndCopyPaths() {
    MainWindow window;
    test_support::open_shown(window, runs_.gpu);
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

  // The three-rank run of the report tests: in phase 0 rank 2 spends a second of its four in
  // MPI_Barrier while the others work, so they lose a second waiting for rank 0 or 1.
  void summaryOpensWithTheFindingsEachUnfoldingIntoItsEvidence() {
    const auto imbalanced = QDir(runs_.directory.path()).filePath(QStringLiteral("three-ranks.sqlite"));
    {
      commlens::test::TestDatabase database(imbalanced.toStdString());
      commlens::test::fill_three_rank_run(database);
    }
    MainWindow window;
    test_support::open_shown(window, imbalanced);
    const auto& findings = window.summary()->findings();
    // The finding, then what a summary-mode run without MPI_T could not be analysed for.
    QCOMPARE(findings.topLevelItemCount(), 3);
    QVERIFY(findings.topLevelItem(1)->text(0).startsWith(QStringLiteral("Not analysed: late sender")));
    const auto* finding = findings.topLevelItem(0);
    QVERIFY2(finding->text(0).startsWith(QStringLiteral("1. Load imbalance in phase 0: rank 0 works")),
             qPrintable(finding->text(0)));
    QCOMPARE(finding->text(2), QStringLiteral("load-imbalance@phase-0"));
    QCOMPARE(finding->text(1), QStringLiteral("1 s, 2.5%"));
    QVERIFY2(
        finding->child(0)->text(0).startsWith(QStringLiteral("Evidence: rank 0 worked 4.000 s outside MPI")),
        qPrintable(finding->child(0)->text(0)));
    QVERIFY(finding->child(finding->childCount() - 1)->text(0).startsWith(QStringLiteral("Query: SELECT")));
  }

  // The late-sender finding of kLateSender: double-clicking it shows the 150 ms wait with a fifth
  // of it either side in the timeline, rank 1's MPI_Recv calls highlighted.
  void aFindingOpensItsEvidenceInTheTimeline() {
    const auto late = QDir(runs_.directory.path()).filePath(QStringLiteral("late-sender.sqlite"));
    {
      commlens::test::TestDatabase database(late.toStdString());
      commlens::test::fill_trace_run(database);
      database.execute(kLateSender);
    }
    MainWindow window;
    test_support::open_shown(window, late);
    auto* findings = window.summary()->findChild<QTreeWidget*>();
    QTreeWidgetItem* finding = nullptr;
    for (int index = 0; index < findings->topLevelItemCount(); ++index)
      if (findings->topLevelItem(index)->text(2) == QStringLiteral("late-sender@MPI_COMM_WORLD"))
        finding = findings->topLevelItem(index);
    QVERIFY(finding);
    QCOMPARE(finding->child(1)->text(0),
             QStringLiteral("Timeline: %1 on ranks 1 and 0, MPI_Recv highlighted (double-click to show)")
                 .arg(format_duration(150'000'000)));
    QVERIFY(
        finding->toolTip(0).endsWith(QStringLiteral("Double-click to show its evidence in the timeline.")));
    findings->scrollToItem(finding);
    // A double-click as the mouse makes it: a click, then the second press (the view activates an
    // item only where the press before was).
    const auto centre = findings->visualItemRect(finding).center();
    QTest::mouseClick(findings->viewport(), Qt::LeftButton, {}, centre);
    QTest::mouseDClick(findings->viewport(), Qt::LeftButton, {}, centre);
    QCOMPARE(window.findChild<QTabWidget*>()->currentWidget(), static_cast<QWidget*>(window.timeline()));
    const auto* canvas = window.timeline()->canvas();
    QCOMPARE(canvas->viewport().start_ns(), std::int64_t{70'000'000});
    QCOMPARE(canvas->viewport().end_ns(), std::int64_t{280'000'000});
    QCOMPARE(canvas->highlighted_function(), std::optional<int>(2)); // MPI_Recv
  }

  void summaryOfARunWithoutFindingsSaysSoInOneLine() {
    MainWindow window;
    test_support::open_shown(window, runs_.gpu);
    const auto& findings = window.summary()->findings();
    QCOMPARE(findings.topLevelItem(0)->text(0), QStringLiteral("No finding: no rule reached its threshold"));
  }

  void copyPathsListEachPathRankAndGpuWithBandwidth() {
    MainWindow window;
    test_support::open_shown(window, runs_.gpu);
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
    const analysis::Database database(runs_.gpu.toStdString());
    std::vector<std::int64_t> chosen;
    for (const auto& copy : analysis::query_timeline_copies(database, 0, 0, 100000))
      if (canvas->copy_selection()->contains(copy, 0))
        chosen.push_back(copy.start_ns);
    QCOMPARE(chosen, (std::vector<std::int64_t>{1500}));
  }

  void compareShowsTheImplementationsOfAnAbRun() {
    MainWindow window;
    test_support::open_shown(window, runs_.ab);
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
    test_support::open_shown(window, runs_.plain);
    window.show_view(QStringLiteral("compare"));
    window.compare()->wait_for_implementations();
    QVERIFY(window.compare()->status().contains(QStringLiteral("Open a second database")));
    QCOMPARE(window.compare()->model().function_row(QStringLiteral("MPI_Send"))->calls_b, std::uint64_t{0});
    QCOMPARE(window.compare()->model().columnCount(), int(CompareModel::MedianRatio)); // no medians
  }

private:
  const CraftedRuns runs_;
};

QTEST_MAIN(ViewerCraftedTest)
#include "viewer_crafted_test.moc"
