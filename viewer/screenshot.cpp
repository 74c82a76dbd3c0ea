#include "screenshot.hpp"

#include "compare_view.hpp"
#include "main_window.hpp"
#include "summary_view.hpp"
#include "timeline_view.hpp"

#include <QApplication>
#include <QElapsedTimer>
#include <QPixmap>
#include <QScreen>
#include <QWindow>

#include <cmath>

namespace commlens::viewer {
namespace {

// The window system maps a shown window asynchronously; grabbing before that captures nothing.
bool wait_until_exposed(QWidget& window) {
  constexpr int kTimeoutMs = 10000;
  QElapsedTimer waited;
  waited.start();
  while (!(window.windowHandle() && window.windowHandle()->isExposed())) {
    if (waited.elapsed() > kTimeoutMs)
      return false;
    QApplication::processEvents(QEventLoop::AllEvents, 50);
  }
  return true;
}

} // namespace

QString prepare_screenshot(MainWindow& window, const ScreenshotRequest& request) {
  if (!window.show_view(request.view))
    return QStringLiteral("unknown view '%1' (one of %2)")
        .arg(request.view, MainWindow::view_names().join(", "));
  window.resize(1280, 800);
  if (!request.on_screen)
    window.setAttribute(Qt::WA_DontShowOnScreen);
  window.show(); // lays the widgets out at their real sizes
  window.open(request.database);
  window.loader().wait();
  if (!window.database())
    return window.last_error();
  if (!request.compare_with.isEmpty()) {
    window.compare()->open_second(request.compare_with);
    window.compare()->loader().wait();
  } else if (request.view == QLatin1String("compare")) {
    window.compare()->wait_for_implementations(); // an A/B run compares its implementations
  }
  if (request.view == QLatin1String("summary"))
    window.summary()->wait_for_findings();
  QApplication::processEvents();
  // Only the timeline waits for its calls: the other views are complete once loaded, and the
  // fetch of the whole trace's window would only delay them.
  if (request.view == QLatin1String("timeline")) {
    if (request.window_ms) {
      const auto origin = window.database()->timeline.start_ns;
      window.timeline()->canvas()->show_range(origin + std::llround(request.window_ms->first * 1e6),
                                              origin + std::llround(request.window_ms->second * 1e6));
    }
    window.timeline()->canvas()->wait_for_data();
    window.timeline()->overview()->wait_for_data();
  }
  QApplication::processEvents();
  return {};
}

QString grab_screenshot(MainWindow& window, const ScreenshotRequest& request) {
  if (const auto error = prepare_screenshot(window, request); !error.isEmpty())
    return error;
  QPixmap image;
  if (request.on_screen) {
    if (!wait_until_exposed(window))
      return QStringLiteral("the window was never shown on the display");
    window.repaint();
    image = window.screen()->grabWindow(window.winId());
  } else {
    image = window.grab();
  }
  if (!image.save(request.output_png))
    return QStringLiteral("%1: cannot write the PNG").arg(request.output_png);
  return {};
}

QString save_screenshot(const ScreenshotRequest& request) {
  MainWindow window;
  return grab_screenshot(window, request);
}

} // namespace commlens::viewer
