#include "commlens/profiler/rank_metadata.hpp"

namespace commlens {

RankMetadata::RankMetadata(std::uint64_t start_ticks) {
  phases_.push_back(Phase{0, start_ticks, 0, -1});
}

std::uint16_t RankMetadata::begin_next_phase(std::uint64_t ticks, int pcontrol_level) {
  std::lock_guard lock(mutex_);
  phases_.back().end_ticks = ticks;
  const auto number = static_cast<std::uint16_t>(phases_.back().number + 1);
  phases_.push_back(Phase{number, ticks, 0, pcontrol_level});
  ++version_;
  return number;
}

void RankMetadata::end_last_phase(std::uint64_t ticks) {
  std::lock_guard lock(mutex_);
  phases_.back().end_ticks = ticks;
  ++version_;
}

void RankMetadata::set_run_value(const std::string& key, const std::string& value) {
  std::lock_guard lock(mutex_);
  run_values_[key] = value;
  ++version_;
}

void RankMetadata::set_clock_alignment(const ClockAlignment& alignment) {
  std::lock_guard lock(mutex_);
  alignment_ = alignment;
  ++version_;
}

void RankMetadata::store_rows(std::string insert_sql, std::vector<std::vector<SqlValue>> rows) {
  std::lock_guard lock(mutex_);
  pending_rows_.emplace_back(std::move(insert_sql), std::move(rows));
}

void RankMetadata::add_overhead(const std::string& component, std::uint64_t count, std::uint64_t time_ns,
                                std::optional<std::uint64_t> cpu_time_ns) {
  std::lock_guard lock(mutex_);
  OverheadTotals& totals = overhead_[component];
  totals.count += count;
  totals.time_ns += time_ns;
  if (cpu_time_ns) {
    totals.cpu_time_ns = totals.cpu_time_ns.value_or(0) + *cpu_time_ns;
  }
  ++version_;
}

RankMetadata::Snapshot RankMetadata::take_snapshot(std::uint64_t& stored_version, bool everything) {
  Snapshot snapshot;
  std::lock_guard lock(mutex_);
  if (version_ != stored_version || everything) {
    stored_version = version_;
    snapshot.phases_and_run_values.emplace(phases_, run_values_);
  }
  snapshot.overhead = overhead_;
  snapshot.alignment = alignment_;
  snapshot.collector_rows.swap(pending_rows_);
  return snapshot;
}

} // namespace commlens
