#pragma once
// Opens a trace in a main window shown off screen at a desktop size, so the widgets have their
// real sizes, and waits for the load and the findings (the crafted-database tests share it).
#include "main_window.hpp"
#include "summary_view.hpp"

#include <QString>
#include <QTest>

namespace commlens::viewer::test_support {

inline void open_shown(MainWindow& window, const QString& path) {
  window.resize(1280, 800);
  window.setAttribute(Qt::WA_DontShowOnScreen);
  window.show();
  window.open(path);
  window.loader().wait();
  QVERIFY2(window.database(), qPrintable(window.last_error()));
  window.summary()->wait_for_findings();
}

} // namespace commlens::viewer::test_support
