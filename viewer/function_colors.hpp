#pragma once
// One colour per MPI function, the same in every view and every run: derived from the name, not
// from the id, because function ids differ between MPI libraries.
#include <QColor>
#include <QString>

namespace commlens::viewer {

QColor function_color(const QString& function_name);

} // namespace commlens::viewer
