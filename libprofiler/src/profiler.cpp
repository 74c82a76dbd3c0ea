#include "commlens/profiler/profiler.hpp"

#include "commlens/profiler/merge.hpp"
#include "writer_thread.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace commlens {

std::atomic<Profiler*> Profiler::active_{nullptr};

Profiler::Profiler(Config config, ProcessIdentity identity, std::vector<FunctionDescription> functions,
                   std::vector<std::string> datatypes, Storage storage)
    : config_(std::move(config)), identity_(std::move(identity)), functions_(std::move(functions)),
      datatypes_(std::move(datatypes)), storage_(storage),
      clock_(identity_.mpi_init_ticks != 0 && identity_.mpi_init_ns != 0
                 ? TickConverter(ClockReading{identity_.mpi_init_ticks, identity_.mpi_init_ns})
                 : TickConverter()),
      init_ns_(clock_.to_ns(identity_.mpi_init_ticks != 0 ? identity_.mpi_init_ticks : now_ticks())) {
  phases_.push_back(Phase{0, identity_.mpi_init_ticks != 0 ? identity_.mpi_init_ticks : now_ticks(), 0, -1});
}

Profiler::~Profiler() = default;

Profiler* Profiler::start(Config config, ProcessIdentity identity, std::vector<FunctionDescription> functions,
                          std::vector<std::string> datatypes, Storage storage) {
  std::error_code error;
  if (storage == Storage::RankFile) {
    std::filesystem::create_directories(config.output_directory, error);
  }
  if (error) {
    std::fprintf(stderr, "commlens: cannot create COMMLENS_OUTPUT directory %s: %s; running unprofiled\n",
                 config.output_directory.c_str(), error.message().c_str());
    return nullptr;
  }
  // Deliberately never deleted: threads may hold its recorders until the process exits.
  auto* profiler = new Profiler(std::move(config), std::move(identity), std::move(functions),
                                std::move(datatypes), storage);
  const std::string path = storage == Storage::RankFile ? profiler->rank_database_path() : kInMemoryDatabase;
  try {
    auto store = std::make_unique<RankStore>(path, profiler->identity_.run_rank);
    store->write_catalog(profiler->functions_, profiler->datatypes_, profiler->identity_, profiler->init_ns_,
                         profiler->clock_);
    profiler->writer_ = std::make_unique<WriterThread>(*profiler, std::move(store));
  } catch (const std::exception& failure) {
    std::fprintf(stderr, "commlens: cannot write %s: %s; running unprofiled\n", path.c_str(), failure.what());
    delete profiler;
    return nullptr;
  }
  profiler->set_run_value("mode", mode_name(profiler->config_.mode));
  for (const auto& [key, value] : profiler->config_.raw) {
    profiler->set_run_value("config." + key, value);
  }
  active_.store(profiler, std::memory_order_release);
  return profiler;
}

std::string Profiler::stop() {
  active_.store(nullptr, std::memory_order_release);
  {
    std::lock_guard lock(metadata_mutex_);
    phases_.back().end_ticks = now_ticks(); // the last phase ends at finalize
    ++metadata_version_;
  }
  writer_->stop();
  return rank_database_path();
}

void Profiler::flush() {
  writer_->flush_now();
}

void Profiler::wake_writer() noexcept {
  writer_->wake();
}

bool Profiler::writer_draining() const noexcept {
  return writer_->draining();
}

ThreadRecorder* Profiler::register_thread() noexcept {
  std::uint16_t index = thread_count_.load(std::memory_order_relaxed);
  do {
    if (index >= ThreadRecorder::kMaxThreads) {
      return refuse_thread();
    }
  } while (!thread_count_.compare_exchange_weak(index, static_cast<std::uint16_t>(index + 1),
                                                std::memory_order_acq_rel));
  try {
    auto* recorder =
        new ThreadRecorder(identity_.run_rank, index, config_.mode == Mode::Trace ? this : nullptr,
                           config_.buffer_events, config_.summary_slots);
    threads_[index].store(recorder, std::memory_order_release);
    return recorder;
  } catch (const std::bad_alloc&) {
    return refuse_thread();
  }
}

Profiler::Losses Profiler::losses() const noexcept {
  Losses losses;
  losses.dropped_events = threads_refused_.load(std::memory_order_relaxed);
  const std::uint16_t threads = thread_count_.load(std::memory_order_acquire);
  for (std::uint16_t index = 0; index < threads; ++index) {
    if (ThreadRecorder* recorder = threads_[index].load(std::memory_order_acquire)) {
      losses.dropped_events += recorder->ring().dropped();
      losses.summary_overflow += recorder->summary().overflowed();
    }
  }
  return losses;
}

std::uint16_t Profiler::begin_next_phase(int pcontrol_level) {
  std::lock_guard lock(metadata_mutex_);
  const std::uint64_t ticks = now_ticks();
  phases_.back().end_ticks = ticks;
  const auto number = static_cast<std::uint16_t>(phases_.back().number + 1);
  phases_.push_back(Phase{number, ticks, 0, pcontrol_level});
  ++metadata_version_;
  phase_.store(number, std::memory_order_relaxed);
  return number;
}

std::string Profiler::rank_database_path() const {
  return (std::filesystem::path(config_.output_directory) / rank_database_name(identity_.run_rank)).string();
}

std::string Profiler::merged_database_path() const {
  return (std::filesystem::path(config_.output_directory) / "commlens.sqlite").string();
}

void Profiler::set_run_value(const std::string& key, const std::string& value) {
  std::lock_guard lock(metadata_mutex_);
  run_values_[key] = value;
  ++metadata_version_;
}

void Profiler::set_clock_alignment(const ClockAlignment& alignment) {
  std::lock_guard lock(metadata_mutex_);
  alignment_ = alignment;
  ++metadata_version_;
}

void Profiler::store_rows(std::string insert_sql, std::vector<std::vector<SqlValue>> rows) {
  std::lock_guard lock(metadata_mutex_);
  pending_rows_.emplace_back(std::move(insert_sql), std::move(rows));
}

void Profiler::add_overhead(const std::string& component, std::uint64_t count, std::uint64_t time_ns,
                            std::optional<std::uint64_t> cpu_time_ns) {
  std::lock_guard lock(metadata_mutex_);
  OverheadTotals& totals = overhead_[component];
  totals.count += count;
  totals.time_ns += time_ns;
  if (cpu_time_ns) {
    totals.cpu_time_ns = totals.cpu_time_ns.value_or(0) + *cpu_time_ns;
  }
  ++metadata_version_;
}

} // namespace commlens
