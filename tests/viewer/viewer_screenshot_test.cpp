// Saves a PNG of every view of a halo_demo trace into $COMMLENS_SCREENSHOT_DIR (the build tree
// under ctest) and checks what a person would see in it, read from the widgets that were grabbed:
// the summary names the collectors and draws one bar per rank on a time axis with units, the
// histogram opens on the function that moved the most bytes with units on its axis and the second
// run overlaid, the timeline's
// lanes fill the window, and the image is the window's size. Runs twice under ctest: on the
// offscreen platform, and in a real X server (xvfb-run) with COMMLENS_SCREENSHOT_ON_SCREEN=1, where
// the window is mapped and the capture is what the X server shows.
#include "compare_view.hpp"
#include "copy_paths_view.hpp"
#include "histogram_view.hpp"
#include "main_window.hpp"
#include "screenshot.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"

#include "harness/job.hpp"

#include <QDir>
#include <QImage>
#include <QtTest>

using namespace commlens::viewer;
namespace integration = commlens::integration;

namespace {

constexpr int kRanks = 4;

// Every label ends in a unit: a time ("0 ns", "2.5 ms", "1 s") or a size ("0B", "512KiB").
bool all_have_units(const QStringList& labels, const QStringList& units) {
  for (const auto& label : labels)
    if (std::none_of(units.begin(), units.end(), [&](const QString& unit) { return label.endsWith(unit); }))
      return false;
  return !labels.isEmpty();
}

const QStringList kTimeUnits = {QStringLiteral(" ns"), QStringLiteral(" us"), QStringLiteral(" ms"),
                                QStringLiteral(" s")};
const QStringList kSizeUnits = {QStringLiteral("B")};

} // namespace

class ViewerScreenshotTest : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    const auto first = integration::run_profiled_job(
        {.command = {integration::example_program("halo_demo"), "200", "64"}, .mode = "trace"});
    QVERIFY2(first.exit_code == 0, first.describe().c_str());
    // A second run with larger halos, for the compare view.
    const auto second = integration::run_profiled_job(
        {.command = {integration::example_program("halo_demo"), "50", "4096"}, .mode = "trace"});
    QVERIFY2(second.exit_code == 0, second.describe().c_str());
    database_ = QString::fromStdString(first.merged_database().string());
    second_database_ = QString::fromStdString(second.merged_database().string());
    directory_ = qEnvironmentVariable("COMMLENS_SCREENSHOT_DIR", QDir::currentPath());
    QVERIFY(QDir().mkpath(directory_));
  }

  void savesEveryView_data() {
    QTest::addColumn<QString>("view");
    for (const auto& view : MainWindow::view_names())
      QTest::newRow(qPrintable(view)) << view;
  }

  void savesEveryView() {
    QFETCH(QString, view);
    const auto png = QDir(directory_).filePath(QStringLiteral("viewer-%1.png").arg(view));
    QFile::remove(png);
    const bool on_screen = qEnvironmentVariableIntValue("COMMLENS_SCREENSHOT_ON_SCREEN") == 1;
    MainWindow window;
    const auto error = grab_screenshot(window, {database_, png, view, second_database_, on_screen});
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(QImage(png).size(), QSize(1280, 800));
    if (view == QLatin1String("summary"))
      checkSummary(*window.summary());
    else if (view == QLatin1String("timeline"))
      checkTimeline(*window.timeline()->canvas());
    else if (view == QLatin1String("histograms"))
      checkHistograms(window);
  }

private:
  static void checkSummary(const SummaryView& summary) {
    // A CPU run: MPI calls traced, the CUDA collectors off and saying why.
    QVERIFY2(summary.collectors().startsWith(QStringLiteral("MPI calls (trace)")),
             qPrintable(summary.collectors()));
    QVERIFY2(summary.collectors().contains(QStringLiteral("CUDA off (")), qPrintable(summary.collectors()));
    QVERIFY(summary.headline().contains(summary.collectors().toHtmlEscaped()));
    QCOMPARE(summary.rank_chart().bars().size(), std::size_t{kRanks});
    for (const auto& bar : summary.rank_chart().bars())
      QVERIFY2(bar.segments.size() >= 2, qPrintable(bar.label)); // split by function
    QVERIFY2(all_have_units(summary.rank_chart().tick_labels(), kTimeUnits),
             qPrintable(summary.rank_chart().tick_labels().join(QLatin1Char(','))));
    const auto& functions = summary.functions();
    QCOMPARE(summary.function_chart().bars().front().label,
             functions.data(functions.index(0, FunctionTableModel::Name), Qt::DisplayRole).toString());
    QVERIFY(summary.copy_chart().bars().empty());
  }

  static void checkTimeline(const TimelineCanvas& canvas) {
    // The lanes share the height: the rows end within a lane's rounding of the canvas' bottom.
    const auto& rows = canvas.rows();
    QCOMPARE(rows.size(), std::size_t{kRanks});
    const auto last = canvas.row_rect(rows.size() - 1);
    QVERIFY2(last.bottom() >= canvas.height() - 2 - static_cast<int>(rows.size()),
             qPrintable(QStringLiteral("rows end at %1 of %2").arg(last.bottom()).arg(canvas.height())));
    QVERIFY(canvas.row_rect(0).height() > 100);
    std::uint64_t shown = 0;
    for (const auto& lane : canvas.fetcher().snapshot().lanes)
      shown += lane.total_calls();
    QVERIFY(shown > 0);
  }

  static void checkHistograms(const MainWindow& window) {
    // halo_demo's Isend and Irecv move the halos; MPI_Cart_create (made first) moves nothing.
    const auto& functions = window.database()->report.functions;
    const auto selected = window.histograms()->selected_function();
    std::uint64_t most = 0;
    for (const auto& function : functions)
      most = std::max(most, function.bytes_sent + function.bytes_recv);
    const auto chosen = std::find_if(functions.begin(), functions.end(), [&](const auto& function) {
      return QString::fromStdString(function.name) == selected;
    });
    QVERIFY(chosen != functions.end());
    QCOMPARE(chosen->bytes_sent + chosen->bytes_recv, most);
    QVERIFY2(selected == QLatin1String("MPI_Isend") || selected == QLatin1String("MPI_Irecv"),
             qPrintable(selected));
    const auto& chart = window.histograms()->chart();
    QVERIFY(!chart.bins().empty());
    QVERIFY(!chart.y_axis_title().isEmpty() && chart.x_axis_title().contains(QStringLiteral("size")));
    // The second run (opened for the compare view) is overlaid, the legend telling the two apart
    // although both files are called commlens.sqlite.
    QCOMPARE(chart.series().size(), std::size_t{2});
    QCOMPARE(chart.legend().size(), 2);
    QVERIFY2(chart.legend()[0] != chart.legend()[1] && chart.legend()[0].startsWith(selected),
             qPrintable(chart.legend().join(QLatin1Char('|'))));
    auto* histograms = window.histograms();
    histograms->select_metric(HistogramMetric::Bytes);
    QVERIFY2(all_have_units(chart.y_tick_labels(), kSizeUnits), qPrintable(chart.y_tick_labels().join(',')));
    histograms->select_metric(HistogramMetric::Time);
    QVERIFY2(all_have_units(chart.y_tick_labels(), kTimeUnits), qPrintable(chart.y_tick_labels().join(',')));
  }

  QString database_, second_database_, directory_;
};

QTEST_MAIN(ViewerScreenshotTest)
#include "viewer_screenshot_test.moc"
