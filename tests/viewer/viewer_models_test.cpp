// The viewer over a real trace of examples/halo_demo (4 ranks, 2 x 2 grid, 20 iterations of a
// 16-double halo exchange plus one Allreduce): each rank posts 4 Isend and 4 Irecv per iteration,
// 2 of them to real neighbours (128 bytes) and 2 to MPI_PROC_NULL (0 bytes).
#include "compare_view.hpp"
#include "copy_paths_view.hpp"
#include "histogram_view.hpp"
#include "main_window.hpp"
#include "partner_matrix_view.hpp"
#include "rank_table_model.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"

#include "harness/job.hpp"

#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <filesystem>

using namespace commlens::viewer;
namespace integration = commlens::integration;

namespace {

constexpr int kIterations = 20, kRanks = 4;
constexpr std::uint64_t kHaloBytes = 16 * 8;

std::uint64_t raw(const QAbstractItemModel& model, int row, int column) {
  return model.data(model.index(row, column), kRawValueRole).toULongLong();
}

} // namespace

class ViewerModelsTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    const auto result = integration::run_profiled_job(
        {.command = {integration::example_program("halo_demo"), std::to_string(kIterations), "16"},
         .mode = "trace"});
    QVERIFY2(result.exit_code == 0, result.describe().c_str());
    database_ = QString::fromStdString(result.merged_database().string());
    QVERIFY(std::filesystem::exists(result.merged_database()));
  }

  void summaryModelsHoldTheExactCallCounts() {
    MainWindow window;
    open(window, database_);
    const auto& functions = window.summary()->functions();
    const auto count = [&](const char* name) {
      const int row = functions.row_of(QString::fromLatin1(name));
      return row < 0 ? 0 : raw(functions, row, FunctionTableModel::Calls);
    };
    QCOMPARE(count("MPI_Isend"), std::uint64_t{kRanks * 4 * kIterations});
    QCOMPARE(count("MPI_Irecv"), std::uint64_t{kRanks * 4 * kIterations});
    QCOMPARE(count("MPI_Waitall"), std::uint64_t{kRanks * kIterations});
    QCOMPARE(count("MPI_Allreduce"), std::uint64_t{kRanks * kIterations});
    const int isend = functions.row_of(QStringLiteral("MPI_Isend"));
    QCOMPARE(raw(functions, isend, FunctionTableModel::BytesSent), kRanks * 2 * kIterations * kHaloBytes);
    QCOMPARE(window.summary()->ranks().rowCount(), kRanks);
    QVERIFY(window.summary()->collectors().startsWith(QStringLiteral("MPI calls (trace)")));
    // Every call is MPI's: the ranks' MPI column holds all of their time in calls, and a run without
    // NCCL calls shows no NCCL column.
    const auto& ranks = window.summary()->ranks();
    std::uint64_t mpi_ns = 0;
    for (const auto& entry : window.database()->rank_function_times)
      if (entry.group == 0)
        mpi_ns += static_cast<std::uint64_t>(entry.time_ns);
    QCOMPARE(raw(ranks, 0, RankTableModel::MpiTime), mpi_ns);
    QVERIFY(window.summary()->rank_table().isColumnHidden(RankTableModel::NcclTime));
    QVERIFY2(window.summary()->headline().contains(
                 QStringLiteral("time in communication, summed over ranks: MPI ")),
             qPrintable(window.summary()->headline()));
    // The traced calls, counted from the merge's level-of-detail tiles: every row of mpi_calls.
    sqlite3* handle = nullptr;
    QCOMPARE(sqlite3_open_v2(database_.toUtf8().constData(), &handle, SQLITE_OPEN_READONLY, nullptr),
             SQLITE_OK);
    sqlite3_stmt* count_calls = nullptr;
    QCOMPARE(sqlite3_prepare_v2(handle, "SELECT count(*) FROM mpi_calls", -1, &count_calls, nullptr),
             SQLITE_OK);
    QCOMPARE(sqlite3_step(count_calls), SQLITE_ROW);
    const auto rows = static_cast<std::uint64_t>(sqlite3_column_int64(count_calls, 0));
    sqlite3_finalize(count_calls);
    sqlite3_close(handle);
    QCOMPARE(window.database()->timeline.calls, rows);
  }

  void histogramShowsHaloAndProcNullMessagesInTheirBins() {
    MainWindow window;
    open(window, database_);
    QVERIFY(window.histograms()->select_function(QStringLiteral("MPI_Isend")));
    const auto& bins = window.histograms()->chart().bins();
    QCOMPARE(bins.size(), std::size_t{2});
    QCOMPARE(bins[0].key, std::string("0"));
    QCOMPARE(bins[0].calls, std::uint64_t{kRanks * 2 * kIterations});
    QCOMPARE(bins[1].key, std::string("2^7"));
    QCOMPARE(bins[1].calls, std::uint64_t{kRanks * 2 * kIterations});
    window.histograms()->select_metric(HistogramMetric::Bytes);
    QCOMPARE(window.histograms()->chart().value_of(bins[1]), double(kRanks * 2 * kIterations * kHaloBytes));
    QVERIFY(window.histograms()->select_phase(0));
    QCOMPARE(window.histograms()->chart().bins().size(), std::size_t{2});
  }

  void partnerMatrixHoldsHaloTrafficBetweenGridNeighbours() {
    MainWindow window;
    open(window, database_);
    const auto& matrix = window.matrix()->model();
    QCOMPARE(matrix.rowCount(), kRanks);
    // Rank 0 at (0, 0) sends to 1 (right) and 2 (below), never to 3 (diagonal) or itself.
    QCOMPARE(matrix.value(0, 1), kIterations * kHaloBytes);
    QCOMPARE(matrix.value(0, 2), kIterations * kHaloBytes);
    QCOMPARE(matrix.value(0, 3), std::uint64_t{0});
    QCOMPARE(matrix.value(0, 0), std::uint64_t{0});
    window.matrix()->set_metric(PartnerMetric::Messages);
    QCOMPARE(matrix.value(3, 1), std::uint64_t{kIterations});
  }

  void copyPathsSayNoCudaDataWithoutCopies() {
    MainWindow window;
    open(window, database_);
    QVERIFY(window.paths()->status().contains(QStringLiteral("No CUDA data")));
    QCOMPARE(window.paths()->rows(), 0);
  }

  void timelineShowsEveryTracedCallOnOneLanePerRank() {
    MainWindow window;
    open(window, database_);
    const auto& database = *window.database();
    QCOMPARE(database.timeline.lanes.size(), std::size_t{kRanks});
    auto* canvas = window.timeline()->canvas();
    canvas->wait_for_data();
    const auto& snapshot = canvas->fetcher().snapshot();
    QCOMPARE(snapshot.lanes.size(), std::size_t{kRanks});
    std::uint64_t shown = 0;
    for (const auto& lane : snapshot.lanes)
      shown += lane.total_calls();
    QCOMPARE(shown, database.timeline.calls);
    std::uint64_t recorded = 0;
    for (const auto& rank : database.report.ranks)
      recorded += rank.calls;
    QCOMPARE(database.timeline.calls, recorded);
  }

  // The merge at MPI_Finalize wrote the level-of-detail tiles: windows as coarse as each level
  // (read from the tiles) still hold every lane's calls.
  void timelineAtEveryTileLevelHoldsEveryCallOfEachLane() {
    MainWindow window;
    open(window, database_);
    const auto& loaded = *window.database();
    const auto& extent = loaded.timeline;
    std::vector<std::int64_t> tile_widths;
    for (std::int64_t width = 1; width < 4 * (extent.end_ns - extent.start_ns); width *= 2) // every level
      if (const auto level = commlens::analysis::query_timeline_tile_level(*loaded.database, width);
          level && level->tile_ns == width)
        tile_widths.push_back(width);
    QVERIFY(!tile_widths.empty());
    for (const auto width : tile_widths) {
      std::uint64_t shown = 0;
      for (const auto& lane : extent.lanes)
        shown += commlens::analysis::query_timeline_window(*loaded.database, lane, extent.start_ns,
                                                           extent.end_ns + 1, width)
                     .total_calls();
      QCOMPARE(shown, extent.calls);
    }
  }

  void wheelZoomAndDragPanMoveTheWindow() {
    MainWindow window;
    open(window, database_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    const auto span = canvas->viewport().span_ns();
    const double middle = TimelineCanvas::kGutterWidth + canvas->viewport().width() / 2.0;
    const auto time_in_middle = canvas->viewport().time_at(middle - TimelineCanvas::kGutterWidth);
    canvas->zoom(4.0, middle);
    QVERIFY(std::llabs(canvas->viewport().span_ns() - span / 4) <= 1);
    QVERIFY(std::llabs(canvas->viewport().time_at(middle - TimelineCanvas::kGutterWidth) - time_in_middle) <=
            span / canvas->viewport().width());
    const auto start = canvas->viewport().start_ns();
    canvas->pan(-100);
    QVERIFY(canvas->viewport().start_ns() > start);
    canvas->show_all();
    QCOMPARE(canvas->viewport().span_ns(), span);
  }

  void findNextSelectsAnAllreduceAndClickingItSelectsTheSameCall() {
    MainWindow window;
    open(window, database_);
    window.show_view(QStringLiteral("timeline"));
    auto* canvas = window.timeline()->canvas();
    QVERIFY(window.timeline()->find_next(QStringLiteral("MPI_Allreduce")));
    QVERIFY(canvas->selection().has_value());
    const auto selected = *canvas->selection();
    QCOMPARE(window.database()->function_name(selected.call.function_id), QStringLiteral("MPI_Allreduce"));
    // Zoom until the call is a wide box, then click its middle.
    const auto duration = std::max<std::int64_t>(selected.call.end_ns - selected.call.start_ns, 200);
    canvas->show_range(selected.call.start_ns - duration, selected.call.end_ns + duration);
    canvas->wait_for_data();
    const auto middle_ns = selected.call.start_ns + (selected.call.end_ns - selected.call.start_ns) / 2;
    const int lane = static_cast<int>(std::find(window.database()->timeline.lanes.begin(),
                                                window.database()->timeline.lanes.end(), selected.lane) -
                                      window.database()->timeline.lanes.begin());
    // Without NVTX ranges, phases or copies, the rows are the lanes.
    QCOMPARE(canvas->rows().size(), window.database()->timeline.lanes.size());
    const QPoint point(TimelineCanvas::kGutterWidth + static_cast<int>(canvas->viewport().x_of(middle_ns)),
                       canvas->row_rect(static_cast<std::size_t>(lane)).center().y());
    QVERIFY(canvas->select_at(point));
    QCOMPARE(canvas->selection()->call.id, selected.call.id);
    const auto details = canvas->describe(*canvas->selection());
    QVERIFY(details.contains(QStringLiteral("MPI_Allreduce")));
    QVERIFY(details.contains(QStringLiteral("bytes sent 8B")));
    QVERIFY(!canvas->select_at(QPoint(2, 2)));
    QVERIFY(!canvas->selection().has_value());
  }

  void badInputIsReportedAndTheOpenDatabaseStays() {
    MainWindow window;
    open(window, database_);
    QTemporaryDir directory;
    const auto text_file = directory.filePath(QStringLiteral("notes.sqlite"));
    QFile text(text_file);
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.write("these are notes, not a database\n");
    text.close();
    QCOMPARE(open_failure(window, text_file), QStringLiteral("not a SQLite database"));

    const auto truncated = directory.filePath(QStringLiteral("truncated.sqlite"));
    QVERIFY(QFile::copy(database_, truncated));
    QFile truncated_file(truncated);
    QVERIFY(truncated_file.resize(truncated_file.size() / 2));
    QCOMPARE(open_failure(window, truncated), QStringLiteral("truncated"));

    const auto newer = directory.filePath(QStringLiteral("newer.sqlite"));
    QVERIFY(QFile::copy(database_, newer));
    QFile(newer).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    sqlite3* handle = nullptr;
    QCOMPARE(sqlite3_open(newer.toUtf8().constData(), &handle), SQLITE_OK);
    QCOMPARE(sqlite3_exec(handle, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(handle);
    QCOMPARE(open_failure(window, newer), QStringLiteral("newer"));

    QCOMPARE(QString::fromStdString(window.database()->path.string()), database_);
  }

  void compareOfARunWithItselfGivesRatiosOfOne() {
    MainWindow window;
    open(window, database_);
    window.compare()->open_second(database_);
    window.compare()->loader().wait();
    const auto* allreduce = window.compare()->model().function_row(QStringLiteral("MPI_Allreduce"));
    QVERIFY(allreduce);
    QCOMPARE(allreduce->calls_a, std::uint64_t{kRanks * kIterations});
    QCOMPARE(allreduce->calls_b, allreduce->calls_a);
    QCOMPARE(allreduce->mean_time_ratio().value_or(0), 1.0);
  }

private:
  static void open(MainWindow& window, const QString& path) {
    // Shown (off screen) so the widgets have their real sizes, as on a desktop.
    window.setAttribute(Qt::WA_DontShowOnScreen);
    window.show();
    window.open(path);
    window.loader().wait();
    QVERIFY2(window.database(), qPrintable(window.last_error()));
  }

  // Opens `path`, expects a failure and returns which expected phrase the reason contains.
  static QString open_failure(MainWindow& window, const QString& path) {
    window.open(path);
    window.loader().wait();
    const auto reason = window.last_error();
    for (const auto* phrase : {"not a SQLite database", "truncated", "newer"})
      if (reason.contains(QLatin1String(phrase)))
        return QLatin1String(phrase);
    return reason;
  }

  QString database_;
};

QTEST_MAIN(ViewerModelsTest)
#include "viewer_models_test.moc"
