#include "communication_time.hpp"

#include "format.hpp"
#include "palette.hpp"

#include <QCoreApplication>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("CommunicationTime", text);
}

void add(CommunicationTime& time, const LoadedDatabase& database, const std::string& function,
         std::uint64_t calls, std::int64_t time_ns) {
  const bool setup = database.is_setup_function(function);
  if (is_nccl(QString::fromStdString(function))) {
    time.nccl_ns += time_ns;
    time.nccl_setup_ns += setup ? time_ns : 0;
    time.nccl_calls += calls;
  } else {
    time.mpi_ns += time_ns;
    time.mpi_setup_ns += setup ? time_ns : 0;
    time.mpi_calls += calls;
  }
}

QString part(const QString& name, std::int64_t total_ns, std::int64_t setup_ns) {
  return setup_ns > 0
             ? tr("%1 %2 (set-up %3)").arg(name, format_duration(total_ns), format_duration(setup_ns))
             : tr("%1 %2").arg(name, format_duration(total_ns));
}

} // namespace

CommunicationTime run_communication_time(const LoadedDatabase& database) {
  CommunicationTime time;
  for (const auto& function : database.report.functions)
    add(time, database, function.name, function.calls, function.time_total_ns);
  time.steps = static_cast<int>(database.report.training_steps.steps.size());
  for (const auto& entry : database.phase_function_times)
    if (database.phase_names.step_number(entry.group) && entry.function != "MPI_Pcontrol")
      time.steps_ns += entry.time_ns;
  return time;
}

std::map<int, CommunicationTime> rank_communication_times(const LoadedDatabase& database) {
  std::map<int, CommunicationTime> times;
  for (const auto& entry : database.rank_function_times)
    add(times[entry.group], database, entry.function, entry.calls, entry.time_ns);
  return times;
}

QString communication_text(const CommunicationTime& time) {
  QStringList parts;
  parts << (time.mpi_calls > 0 ? part(QStringLiteral("MPI"), time.mpi_ns, time.mpi_setup_ns)
                               : tr("no MPI calls"));
  if (time.nccl_calls > 0)
    parts << part(QStringLiteral("NCCL"), time.nccl_ns, time.nccl_setup_ns);
  if (time.steps > 0)
    parts << tr("in the %1 training steps %2").arg(time.steps).arg(format_duration(time.steps_ns));
  return parts.join(QStringLiteral(" \u00b7 "));
}

} // namespace commlens::viewer
