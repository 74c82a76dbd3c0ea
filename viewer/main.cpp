// commlens-viewer [--view VIEW] [--compare DB2] [DB]
// commlens-viewer --screenshot FILE.png [--view summary|timeline|histograms|matrix|paths|steps|compare]
//                 [--compare DB2] [--window FROM:TO] DB
#include "compare_view.hpp"
#include "main_window.hpp"
#include "screenshot.hpp"

#include <QApplication>
#include <QCommandLineParser>

#include <cstdio>

int main(int argc, char** argv) {
  QApplication application(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("commlens"));
  QApplication::setApplicationName(QStringLiteral("commlens-viewer"));
  QApplication::setApplicationVersion(QStringLiteral(COMMLENS_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Inspect commlens databases: timeline, histograms, partner matrix."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                      QStringLiteral("Render one view to FILE.png and exit."),
                                      QStringLiteral("FILE.png"));
  const QCommandLineOption view(
      QStringLiteral("view"),
      QStringLiteral("View to show (or to render with --screenshot): %1.")
          .arg(commlens::viewer::MainWindow::view_names().join(QStringLiteral(", "))),
      QStringLiteral("VIEW"), QStringLiteral("summary"));
  const QCommandLineOption compare(QStringLiteral("compare"),
                                   QStringLiteral("Second database for the compare view."),
                                   QStringLiteral("DB2"));
  const QCommandLineOption window_option(
      QStringLiteral("window"),
      QStringLiteral(
          "With --screenshot --view timeline: the window to show, FROM:TO in ms from the first call."),
      QStringLiteral("FROM:TO"));
  parser.addOptions({screenshot, view, compare, window_option});
  parser.addPositionalArgument(QStringLiteral("DB"), QStringLiteral("commlens database (commlens.sqlite)."));
  parser.process(application);
  const auto databases = parser.positionalArguments();

  if (parser.isSet(screenshot)) {
    if (databases.size() != 1) {
      std::fprintf(stderr, "commlens-viewer: --screenshot needs exactly one database\n");
      return 2;
    }
    commlens::viewer::ScreenshotRequest request{databases.first(), parser.value(screenshot),
                                                parser.value(view), parser.value(compare)};
    if (parser.isSet(window_option)) {
      const auto bounds = parser.value(window_option).split(QLatin1Char(':'));
      bool from_ok = false, to_ok = false;
      const double from = bounds.value(0).toDouble(&from_ok), to = bounds.value(1).toDouble(&to_ok);
      if (bounds.size() != 2 || !from_ok || !to_ok || to <= from) {
        std::fprintf(stderr, "commlens-viewer: --window wants FROM:TO in ms, FROM < TO\n");
        return 2;
      }
      request.window_ms = std::pair{from, to};
    }
    const auto error = commlens::viewer::save_screenshot(request);
    if (!error.isEmpty()) {
      std::fprintf(stderr, "commlens-viewer: %s\n", qPrintable(error));
      return 2;
    }
    return 0;
  }

  commlens::viewer::MainWindow window;
  if (parser.isSet(view) && !window.show_view(parser.value(view))) {
    std::fprintf(stderr, "commlens-viewer: unknown view '%s'\n", qPrintable(parser.value(view)));
    return 2;
  }
  window.show();
  if (!databases.isEmpty())
    window.open(databases.first());
  if (parser.isSet(compare))
    window.compare()->open_second(parser.value(compare));
  return application.exec();
}
