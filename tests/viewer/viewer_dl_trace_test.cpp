// The viewer over a real trace of PyTorch DDP training (examples/dl/ddp_train.py, ResNet-50, NCCL
// on 2 H100s under mpirun, 10 steps marked by NVTX ranges, kernels recorded in steps 6-8): the
// trace the user guide's images are made from (docs/images/ddp-resnet50-2gpu.sqlite). Every
// expectation is read from the trace itself with SQL or from the analysis layer, never typed in.
#include "format.hpp"
#include "main_window.hpp"
#include "partner_matrix_view.hpp"
#include "screenshot.hpp"
#include "shown_window.hpp"
#include "steps_view.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"

#include <QtTest>

#include <sqlite3.h>

#include <set>

using namespace commlens::viewer;

namespace {

// Rows of a query over the trace, each column as text.
std::vector<QStringList> rows_of(const QString& path, const char* sql) {
  sqlite3* handle = nullptr;
  std::vector<QStringList> rows;
  if (sqlite3_open_v2(path.toUtf8().constData(), &handle, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
    return rows;
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(handle, sql, -1, &statement, nullptr) == SQLITE_OK)
    while (sqlite3_step(statement) == SQLITE_ROW) {
      QStringList row;
      for (int column = 0; column < sqlite3_column_count(statement); ++column)
        row << QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(statement, column)));
      rows.push_back(row);
    }
  sqlite3_finalize(statement);
  sqlite3_close(handle);
  return rows;
}

} // namespace

class ViewerDlTraceTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY2(QFile::exists(trace_), qPrintable(trace_));
    test_support::open_shown(window_, trace_);
  }

  void timelineOpensOnTheStepsAfterTheWarmUpWithTheSetUpFolded() {
    const auto& database = *window_.database();
    const auto& steps = database.report.training_steps;
    QCOMPARE(steps.warmup_steps, 1);
    const auto shown = std::min<std::size_t>(steps.steps.size(), 1 + PhaseNames::kOpeningSteps) - 1;
    const auto first = rows_of(
        trace_,
        qPrintable(
            QStringLiteral("SELECT MIN(start_ns) FROM phases WHERE phase = %1").arg(steps.steps[1].phase)));
    const auto last = rows_of(
        trace_,
        qPrintable(
            QStringLiteral("SELECT MAX(end_ns) FROM phases WHERE phase = %1").arg(steps.steps[shown].phase)));
    window_.show_view(QStringLiteral("timeline"));
    auto* canvas = window_.timeline()->canvas();
    const auto start = canvas->viewport().start_ns(), end = canvas->viewport().end_ns();
    QCOMPARE(start, first[0][0].toLongLong());
    QCOMPARE(end, last[0][0].toLongLong());
    // The set-up (seconds of NCCL's communicator set-up) is a chip that shows it when clicked.
    const auto chip = canvas->setup_chip();
    QVERIFY(chip.has_value());
    QTest::mouseClick(canvas, Qt::LeftButton, {}, chip->center().toPoint());
    QVERIFY(canvas->viewport().start_ns() < start);
    QCOMPARE(canvas->viewport().end_ns(), end);
    QVERIFY(!canvas->setup_chip());
    // The band names the steps as the Steps view does: step 1 is the first step phase.
    QCOMPARE(database.phase_names.name(steps.steps[0].phase), QStringLiteral("step 1"));
    QCOMPARE(database.phase_names.name(0), QStringLiteral("set-up"));
    canvas->show_range(start, end);
  }

  void eachRankHasALanePerCudaStreamItsWorkRanOn() {
    const auto& database = *window_.database();
    // Every stream a kernel, copy or memset ran on is a lane of its rank.
    std::set<std::tuple<int, int, long long>> stored, shown;
    for (const auto& row : rows_of(trace_, "SELECT rank, device, stream FROM cuda_kernels UNION "
                                           "SELECT rank, device, stream FROM cuda_copies UNION "
                                           "SELECT rank, device, stream FROM cuda_memsets"))
      stored.emplace(row[0].toInt(), row[1].toInt(), row[2].toLongLong());
    for (const auto& stream : database.gpu_streams)
      if (stream.stream)
        shown.emplace(stream.rank, stream.device.value_or(-1), *stream.stream);
    QVERIFY(stored.size() >= 4);
    QCOMPARE(shown, stored);
    // The NCCL calls' GPU spans share the lane of the stream their kernels ran on.
    const auto nccl = std::find_if(database.gpu_streams.begin(), database.gpu_streams.end(),
                                   [](const auto& stream) { return stream.stream && stream.nccl_spans > 0; });
    QVERIFY(nccl != database.gpu_streams.end());
    QVERIFY(nccl->communication_kernels > 0);
    std::size_t stream_rows = 0;
    for (const auto& row : window_.timeline()->canvas()->rows())
      stream_rows += row.kind == TimelineRowKind::Stream;
    QCOMPARE(stream_rows, database.gpu_streams.size());
    // The legend names what the run has.
    QStringList legend;
    for (const auto& entry : window_.timeline()->legend()->entries())
      legend << entry.name;
    for (const auto* name :
         {"NCCL calls", "NCCL set-up", "NCCL call on the GPU (CUDA events)", "compute kernels",
          "communication kernels", "memsets", "CUDA sync (the host waits)"})
      QVERIFY2(legend.contains(QLatin1String(name)), qPrintable(legend.join(QStringLiteral(", "))));
  }

  void kernelsOfARecordedStepHaveShortNames() {
    const auto& steps = window_.database()->report.training_steps;
    const auto recorded = std::find_if(steps.steps.begin(), steps.steps.end(),
                                       [](const auto& step) { return step.gpu_ranks > 0; });
    QVERIFY(recorded != steps.steps.end());
    auto* canvas = window_.timeline()->canvas();
    canvas->show_range(recorded->start_ns, recorded->start_ns + recorded->duration_ns);
    canvas->wait_for_data();
    std::size_t kernels = 0;
    for (const auto& work : canvas->fetcher().snapshot().streams)
      for (const auto& kernel : work.kernels) {
        ++kernels;
        QVERIFY2(!kernel.short_name.startsWith(QLatin1String("_Z")) &&
                     !kernel.short_name.contains(QLatin1Char('(')),
                 qPrintable(kernel.short_name));
      }
    QVERIFY(kernels > 100);
  }

  void stepsViewShowsTheGpuOfEachRecordedStep() {
    const auto& steps = window_.database()->report.training_steps;
    const auto& view = *window_.steps();
    QCOMPARE(view.gpu_chart().bars().size(), std::size_t{3}); // steps 6-8
    for (const auto& bar : view.gpu_chart().bars()) {
      const auto number = bar.label.section(QLatin1Char(' '), 1).toInt();
      const auto& step = steps.steps[static_cast<std::size_t>(number - 1)];
      QVERIFY(step.gpu_ranks > 0);
      QCOMPARE(bar.segments.size(), std::size_t{4});
      QCOMPARE(bar.segments[0].value, double(step.gpu_compute_ns - step.gpu_overlapped_ns));
      QCOMPARE(bar.segments[1].value, double(step.gpu_overlapped_ns));
      QCOMPARE(bar.segments[2].value, double(step.gpu_exposed_ns));
      QCOMPARE(bar.segments[3].value, double(step.gpu_idle_ns));
    }
    QCOMPARE(view.gpu_headers().size(), qsizetype(steps.steps.size() + 1));
    QCOMPARE(view.gpu_cell(0, 1), QStringLiteral("-")); // step 1's kernels were not recorded
  }

  void partnerMatrixShowsTheNcclCollectivesSpreadOverTheMembers() {
    const auto& matrix = *window_.matrix();
    QCOMPARE(matrix.kinds(),
             (QStringList{QStringLiteral("MPI point-to-point"), QStringLiteral("NCCL collectives")}));
    QCOMPARE(matrix.model().kind(), commlens::analysis::TrafficKind::NcclCollective);
    // Two ranks: each sends the other all it put into NCCL collectives.
    const auto contributions =
        rows_of(trace_, "SELECT s.rank, SUM(s.bytes_sent) FROM call_stats s JOIN functions "
                        "f ON f.id = s.function_id WHERE f.family = 'nccl_collective' GROUP BY 1");
    QCOMPARE(contributions.size(), std::size_t{2});
    for (const auto& row : contributions) {
      const int rank = row[0].toInt();
      QCOMPARE(matrix.model().value(rank, 1 - rank), row[1].toULongLong());
    }
  }

  void aScreenshotOfAWindowShowsThatWindowsCalls() {
    // The window the screenshot asks for, not the one the timeline opened on, even when the first
    // read is still being collected when the window is set.
    const auto bcast = rows_of(trace_, "SELECT m.start_ns, m.end_ns FROM mpi_calls m JOIN functions f ON "
                                       "f.id = m.function_id WHERE f.name = 'nccl:Bcast' AND m.rank = 0 "
                                       "ORDER BY m.start_ns LIMIT 1");
    QCOMPARE(bcast.size(), std::size_t{1});
    const double from_ms = bcast[0][0].toDouble() / 1e6 - 1, to_ms = bcast[0][1].toDouble() / 1e6 + 1;
    MainWindow window;
    QCOMPARE(prepare_screenshot(
                 window, {trace_, {}, QStringLiteral("timeline"), {}, false, std::pair{from_ms, to_ms}}),
             QString());
    const auto& snapshot = window.timeline()->canvas()->fetcher().snapshot();
    QVERIFY(snapshot.start_ns <= bcast[0][0].toLongLong() && snapshot.end_ns >= bcast[0][1].toLongLong());
    const auto& lane = snapshot.lanes.front(); // rank 0's first thread
    QVERIFY(std::any_of(lane.calls.begin(), lane.calls.end(),
                        [&](const auto& call) { return call.start_ns == bcast[0][0].toLongLong(); }));
  }

  void summaryTellsMpiFromNcclAndSetUpFromTraining() {
    const auto headline = window_.summary()->headline();
    const auto setup =
        rows_of(trace_, "SELECT SUM(s.time_total_ns) FROM call_stats s JOIN functions f ON f.id = "
                        "s.function_id WHERE f.family = 'nccl_communicator'");
    QVERIFY2(
        headline.contains(QStringLiteral("NCCL ")) &&
            headline.contains(QStringLiteral("(set-up %1)").arg(format_duration(setup[0][0].toLongLong()))),
        qPrintable(headline));
    QVERIFY2(headline.contains(QStringLiteral("in the 10 training steps")), qPrintable(headline));
  }

private:
  QString trace_ = QStringLiteral(COMMLENS_DDP_TRACE);
  MainWindow window_;
};

QTEST_MAIN(ViewerDlTraceTest)
#include "viewer_dl_trace_test.moc"
