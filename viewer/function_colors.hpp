#pragma once
// One colour per MPI (or NCCL) function, the same in every view and every run: derived from the name, not
// from the id, because function ids differ between MPI libraries.
#include <QColor>
#include <QString>

namespace commlens::viewer {

// NCCL calls (functions named nccl:AllReduce, ...) and NCCL's kernels (ncclDevKernel_...) get a
// teal family of their own, apart from every MPI family, so they stand out on a rank's lane.
QColor function_color(const QString& function_name);
bool is_nccl(const QString& name);

// Colours that tell the segments of one chart apart (index 0 is the busiest function), where the
// family hues of function_color would be too alike (MPI_Init and MPI_Finalize side by side).
QColor chart_color(qsizetype index);

} // namespace commlens::viewer
