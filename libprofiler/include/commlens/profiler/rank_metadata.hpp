#pragma once
// The rarely changed state of a rank that its file keeps beside the calls: phases, run values,
// clock alignment, the profiler's own overhead and rows for collectors' tables. Application
// threads change it under a mutex; the writer takes a copy of what changed at each flush.
#include "commlens/profiler/rank_records.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace commlens {

class RankMetadata {
public:
  struct Phase {
    std::uint16_t number;
    std::uint64_t start_ticks;
    std::uint64_t end_ticks; // 0 while open
    int pcontrol_level;      // -1 for phase 0
  };
  using CollectorRows = std::vector<std::pair<std::string, std::vector<std::vector<SqlValue>>>>;

  // Opens phase 0 at start_ticks.
  explicit RankMetadata(std::uint64_t start_ticks);

  // Ends the current phase and opens the next at `ticks`; returns the new phase number.
  std::uint16_t begin_next_phase(std::uint64_t ticks, int pcontrol_level);
  void end_last_phase(std::uint64_t ticks);
  void set_run_value(const std::string& key, const std::string& value);
  void set_clock_alignment(const ClockAlignment& alignment);
  void add_overhead(const std::string& component, std::uint64_t count, std::uint64_t time_ns,
                    std::optional<std::uint64_t> cpu_time_ns);
  void store_rows(std::string insert_sql, std::vector<std::vector<SqlValue>> rows);

  // What the writer stores at a flush, copied under the lock so that it writes without holding it
  // (collectors may wait on the lock).
  struct Snapshot {
    // Phases and run values: only when they changed since the version the writer last stored
    // (or when everything is asked for).
    std::optional<std::pair<std::vector<Phase>, std::map<std::string, std::string>>> phases_and_run_values;
    std::map<std::string, OverheadTotals> overhead;
    ClockAlignment alignment;
    CollectorRows collector_rows; // taken: each is stored once
  };
  // stored_version: the version the caller stored last, updated to the current one.
  Snapshot take_snapshot(std::uint64_t& stored_version, bool everything);

private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> run_values_;
  std::vector<Phase> phases_;
  ClockAlignment alignment_;
  std::map<std::string, OverheadTotals> overhead_;
  CollectorRows pending_rows_;
  std::uint64_t version_ = 0;
};

} // namespace commlens
