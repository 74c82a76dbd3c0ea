#pragma once
// Renders one view of a database to a PNG: opens the database, waits for loading (and, for the
// timeline, for its first window of calls) and grabs the window. By default no window is shown
// (the offscreen platform works as well as a display); `on_screen` maps the window on the display
// and captures what the window system shows (the Xvfb screenshot test). Returns a one-line error,
// empty on success.
#include <QString>

#include <optional>
#include <utility>

namespace commlens::viewer {

struct ScreenshotRequest {
  QString database{};
  QString output_png{};
  QString view = QStringLiteral("summary");
  QString compare_with{}; // second database for the compare view; optional
  bool on_screen = false;
  // The timeline's window, in ms from the first traced call; the whole run when empty.
  std::optional<std::pair<double, double>> window_ms{};
};

class MainWindow;

// Opens the request's database in `window`, shows its view and waits until it is complete, as a
// screenshot shows it (tests read the widgets' state after it). Returns a one-line error.
QString prepare_screenshot(MainWindow& window, const ScreenshotRequest& request);
// prepare_screenshot, then grabs `window` into the request's PNG.
QString grab_screenshot(MainWindow& window, const ScreenshotRequest& request);
QString save_screenshot(const ScreenshotRequest& request);

} // namespace commlens::viewer
