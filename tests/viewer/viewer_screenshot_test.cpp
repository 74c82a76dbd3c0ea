// Saves a PNG of every view of a halo_demo trace into $COMMLENS_SCREENSHOT_DIR (the build tree
// under ctest; docs/images through the viewer_screenshots target) and checks each is a real image:
// the window's size, many colours, not one flat fill. Runs twice under ctest: on the offscreen
// platform, and in a real X server (xvfb-run) with COMMLENS_SCREENSHOT_ON_SCREEN=1, where the
// window is mapped and the capture is what the X server shows.
#include "main_window.hpp"
#include "screenshot.hpp"

#include "harness/job.hpp"

#include <QDir>
#include <QImage>
#include <QtTest>

using namespace commlens::viewer;
namespace integration = commlens::integration;

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
    const auto error = save_screenshot({database_, png, view, second_database_, on_screen});
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1280, 800));
    // A view with text, tables or bars has hundreds of colours (anti-aliased glyphs included); an
    // empty or black capture has one or two.
    QSet<QRgb> colors;
    for (int y = 0; y < image.height(); y += 2)
      for (int x = 0; x < image.width(); x += 2)
        colors.insert(image.pixel(x, y));
    QVERIFY2(colors.size() >= 50, qPrintable(QStringLiteral("%1 colours only").arg(colors.size())));
    QVERIFY(QFileInfo(png).size() > 10000);
  }

private:
  QString database_, second_database_, directory_;
};

QTEST_MAIN(ViewerScreenshotTest)
#include "viewer_screenshot_test.moc"
