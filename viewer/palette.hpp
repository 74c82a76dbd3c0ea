#pragma once
// Every colour the viewer draws with, in families that never share a hue band, so a colour says
// what a thing is on any view and in any run (derived from names, never from ids, which differ
// between MPI libraries):
//   MPI calls     sends orange, receives amber, collectives red, waits and tests blue, set-up and
//                 the rest grey;
//   NCCL calls    teal, their communicator set-up greyish teal; their time on the GPU (CUDA
//                 events) a pale teal;
//   copies        purples and violets, one per path;
//   kernels       compute green, communication (NCCL's, or launched inside a call) dark cyan;
//   CUDA API calls of the host olive;
//   the GPU runtime's calls are hatched and the host-staged baseline outlined: a pattern, not a colour.
#include <QColor>
#include <QString>

#include <string>

namespace commlens::viewer {

enum class CallFamily { MpiSend, MpiReceive, MpiCollective, MpiCompletion, MpiOther, Nccl, NcclSetup };

// The family of an MPI or NCCL function by its name (nccl:AllReduce, MPI_Isend, ...).
CallFamily call_family(const QString& function_name);
QColor family_color(CallFamily family);
QString family_name(CallFamily family); // "MPI sends", "NCCL calls", ...
// One colour per function: its family's, a little apart from its neighbours in the family.
QColor function_color(const QString& function_name);
bool is_nccl(const QString& name);

QColor copy_path_color(const std::string& path);
// `communication`: kernel_names.hpp's KernelKind::Communication.
QColor kernel_color(const QString& short_name, bool communication);
QColor device_span_color();
QColor memset_color();
QColor synchronization_color();
QColor api_call_color();

// Colours that tell the segments of one chart apart (index 0 is the busiest function), where the
// family hues of function_color would be too alike (MPI_Init and MPI_Finalize side by side).
QColor chart_color(qsizetype index);

} // namespace commlens::viewer
