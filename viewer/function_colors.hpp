#pragma once
// One colour per MPI function, the same in every view and every run: derived from the name, not
// from the id, because function ids differ between MPI libraries.
#include <QColor>
#include <QString>

namespace commlens::viewer {

QColor function_color(const QString& function_name);

// Colours that tell the segments of one chart apart (index 0 is the busiest function), where the
// family hues of function_color would be too alike (MPI_Init and MPI_Finalize side by side).
QColor chart_color(qsizetype index);

} // namespace commlens::viewer
