#include "screenshot.hpp"

#include "compare_view.hpp"
#include "main_window.hpp"
#include "timeline_view.hpp"

#include <QApplication>
#include <QPixmap>

namespace commlens::viewer {

QString save_screenshot(const ScreenshotRequest& request) {
  MainWindow window;
  if (!window.show_view(request.view))
    return QStringLiteral("unknown view '%1' (one of %2)")
        .arg(request.view, MainWindow::view_names().join(", "));
  window.resize(1280, 800);
  window.setAttribute(Qt::WA_DontShowOnScreen);
  window.show(); // lays the widgets out at their real sizes; nothing appears on a display
  window.open(request.database);
  window.loader().wait();
  if (!window.database())
    return window.last_error();
  if (!request.compare_with.isEmpty()) {
    window.compare()->open_second(request.compare_with);
    window.compare()->loader().wait();
  }
  QApplication::processEvents();
  window.timeline()->canvas()->wait_for_data();
  QApplication::processEvents();
  if (!window.grab().save(request.output_png))
    return QStringLiteral("%1: cannot write the PNG").arg(request.output_png);
  return {};
}

} // namespace commlens::viewer
