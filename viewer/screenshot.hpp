#pragma once
// Renders one view of a database to a PNG without showing a window (the offscreen platform works
// as well as a display): opens the database, waits for loading and for the timeline's first
// window of calls, and grabs the window. Returns a one-line error, empty on success.
#include <QString>

namespace commlens::viewer {

struct ScreenshotRequest {
  QString database;
  QString output_png;
  QString view = QStringLiteral("summary");
  QString compare_with; // second database for the compare view; optional
};

QString save_screenshot(const ScreenshotRequest& request);

} // namespace commlens::viewer
