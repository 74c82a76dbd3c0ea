#pragma once
// Profiler settings from COMMLENS_* environment variables (and an optional KEY=VALUE file named by
// COMMLENS_CONFIG, whose values the environment overrides). Every bad value is reported once, with
// the variable and the accepted values, and replaced by its default: profiling goes on.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace commlens {

enum class Mode { Summary, Trace };

struct CollectorSet {
  bool pmpi = true;
  bool mpit = true;
  bool cupti = true;
  bool nvtx = true;
};

struct Config {
  std::string output_directory = "commlens-output"; // COMMLENS_OUTPUT
  Mode mode = Mode::Summary;                        // COMMLENS_MODE=summary|trace
  CollectorSet collectors;                          // COMMLENS_COLLECTORS=pmpi,mpit,cupti,nvtx | all | none
  std::size_t buffer_events = 1u << 18;             // COMMLENS_BUFFER_EVENTS, per thread (64 B each)
  std::size_t summary_slots = 1u << 12;             // COMMLENS_SUMMARY_SLOTS, per thread
  std::uint32_t flush_interval_ms = 500;            // COMMLENS_FLUSH_MS, 10..1000
  bool merge_at_finalize = true;                    // COMMLENS_MERGE=1|0
  bool quiet = false;                               // COMMLENS_QUIET=1|0: no banner at finalize

  // Every COMMLENS_* key this run was configured with, as given (stored in the run table).
  std::map<std::string, std::string> raw;

  using Lookup = std::function<const char*(const char*)>;
  using Warn = std::function<void(const std::string&)>;
  // lookup defaults to getenv; warn receives one complete message per bad value.
  static Config from_environment(const Warn& warn, const Lookup& lookup = nullptr);
};

const char* mode_name(Mode mode) noexcept;

} // namespace commlens
