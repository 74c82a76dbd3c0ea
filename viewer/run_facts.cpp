#include "run_facts.hpp"

#include <QCoreApplication>
#include <QStringList>

namespace commlens::viewer {
namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("RunFacts", text);
}

// "on", or "off: why" from a value and its reason key; collectors write "none: why" for off too.
QString state_of(const RunTable& run, std::string_view key, std::string_view reason_key) {
  auto value = run_value(run, key);
  if (value.startsWith(QLatin1String("none")) || value.startsWith(QLatin1String("off"))) {
    auto reason = value.section(QLatin1Char(':'), 1).trimmed();
    if (reason.isEmpty() && value.startsWith(QLatin1String("off (")))
      reason = value.mid(5).chopped(1);
    if (reason.isEmpty())
      reason = run_value(run, reason_key);
    return reason.isEmpty() ? tr("off") : tr("off (%1)").arg(reason);
  }
  return value == QLatin1String("on") || value.isEmpty() ? tr("on") : tr("on (%1)").arg(value);
}

} // namespace

QString run_value(const RunTable& run, std::string_view key) {
  for (const auto& [name, value] : run)
    if (name == key)
      return QString::fromStdString(value);
  return {};
}

QString collectors_line(const RunTable& run) {
  QStringList parts;
  const auto mode = run_value(run, "mode");
  // A PyTorch job under torchrun never initialises MPI: its first NCCL call starts the profiler.
  const auto calls = run_value(run, "mpi_library_version").startsWith(QLatin1String("MPI not initialised"))
                         ? tr("NCCL calls, MPI not initialised")
                         : tr("MPI calls");
  parts << (mode.isEmpty() ? calls : tr("%1 (%2)").arg(calls, mode));
  if (!run_value(run, "mpit_sampling").isEmpty()) {
    const auto sampling = run_value(run, "mpit_sampling");
    parts << tr("MPI_T %1")
                 .arg(sampling.startsWith(QLatin1String("none")) ? state_of(run, "mpit_sampling", {})
                                                                 : tr("on"));
  }
  if (!run_value(run, "cuda_collectors").isEmpty())
    parts << tr("CUDA %1").arg(state_of(run, "cuda_collectors", "cuda_collectors_reason"));
  if (run_value(run, "cuda_collectors") == QLatin1String("on") &&
      !run_value(run, "nvtx_user_ranges").isEmpty())
    parts << tr("NVTX ranges %1").arg(state_of(run, "nvtx_user_ranges", {}));
  if (const auto runtime = run_value(run, "runtime"); !runtime.isEmpty())
    parts << tr("GPU runtime %1")
                 .arg(runtime == QLatin1String("off") ? state_of(run, "runtime", "runtime_reason") : runtime);
  return parts.join(QStringLiteral(" \u00b7 "));
}

} // namespace commlens::viewer
