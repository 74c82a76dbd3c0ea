#include "commlens/profiler/profiler.hpp"

#include "commlens/profiler/own_time.hpp"
#include "commlens/profiler/rank_file.hpp"
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
      init_ns_(clock_.to_ns(identity_.mpi_init_ticks != 0 ? identity_.mpi_init_ticks : now_ticks())),
      metadata_(identity_.mpi_init_ticks != 0 ? identity_.mpi_init_ticks : now_ticks()) {}

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
    const WriterInputs inputs{
        profiler->threads_, profiler->metadata_, profiler->communicators_,           profiler->inside_mpi_,
        profiler->clock_,   profiler->init_ns_,  profiler->config_.flush_interval_ms};
    profiler->writer_ = std::make_unique<WriterThread>(inputs, std::move(store));
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
  metadata_.end_last_phase(now_ticks()); // the last phase ends at finalize
  store_own_time();
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
  return threads_.register_thread(identity_.run_rank, config_.mode == Mode::Trace ? this : nullptr,
                                  config_.buffer_events, config_.summary_slots);
}

std::uint16_t Profiler::begin_next_phase(int pcontrol_level) {
  const std::uint16_t number = metadata_.begin_next_phase(now_ticks(), pcontrol_level);
  phase_.store(number, std::memory_order_relaxed);
  return number;
}

std::string Profiler::rank_database_path() const {
  return (std::filesystem::path(config_.output_directory) / rank_database_name(identity_.run_rank)).string();
}

std::string Profiler::merged_database_path() const {
  return (std::filesystem::path(config_.output_directory) / "commlens.sqlite").string();
}

void Profiler::store_own_time() {
  for (const OwnTimeMeter* meter = first_own_time_meter(); meter != nullptr; meter = meter->next()) {
    if (meter->samples() > 0) { // scaled up from the sample of one call in kOwnTimeSampleEvery
      add_overhead(meter->component(), meter->samples() * kOwnTimeSampleEvery,
                   clock_.duration_ns(meter->sampled_ticks()) * kOwnTimeSampleEvery);
    }
  }
}

void Profiler::set_run_value(const std::string& key, const std::string& value) {
  metadata_.set_run_value(key, value);
}

void Profiler::set_clock_alignment(const ClockAlignment& alignment) {
  metadata_.set_clock_alignment(alignment);
}

void Profiler::store_rows(std::string insert_sql, std::vector<std::vector<SqlValue>> rows) {
  metadata_.store_rows(std::move(insert_sql), std::move(rows));
}

void Profiler::add_overhead(const std::string& component, std::uint64_t count, std::uint64_t time_ns,
                            std::optional<std::uint64_t> cpu_time_ns) {
  metadata_.add_overhead(component, count, time_ns, cpu_time_ns);
}

} // namespace commlens
