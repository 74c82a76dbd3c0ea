#include "pvar_sampler.hpp"

#include "mpit_names.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace commlens::mpit {

namespace {

const char* const kInsertSample =
    "INSERT INTO pvar_samples (rank, pvar_id, comm_id, time_ns, value, element, "
    "trigger, call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
const char* const kInsertHandle =
    "INSERT INTO pvar_handles (rank, pvar_id, comm_id, elements, status, created_ns, "
    "freed_ns) VALUES (?, ?, ?, ?, ?, ?, ?)";

SqlValue optional_value(std::optional<std::int64_t> value) {
  return value ? SqlValue{*value} : SqlValue{};
}

} // namespace

PvarSampler::PvarSampler(Profiler& profiler, std::vector<PvarDescription> selected)
    : profiler_(profiler), selected_(std::move(selected)) {
  const int rc = MPI_T_pvar_session_create(&session_);
  opened_ = rc == MPI_SUCCESS;
  if (!opened_) {
    report_once(profiler_, "MPI_T_pvar_session_create", rc, "no performance variables are sampled");
  }
}

PvarSampler::~PvarSampler() {
  close();
}

void PvarSampler::bind_unbound() {
  std::lock_guard lock(mutex_);
  for (const PvarDescription& pvar : selected_) {
    if (pvar.binding == MPI_T_BIND_NO_OBJECT) {
      bind(pvar, nullptr, std::nullopt);
    } else if (pvar.binding != MPI_T_BIND_MPI_COMM) {
      record_handle(pvar, std::nullopt, {},
                    fmt::format("not sampled: bound to {} objects", binding_name(pvar.binding)), now_ns(),
                    now_ns());
    }
  }
}

void PvarSampler::bind_communicator(MPI_Comm comm, std::int64_t comm_id) {
  std::lock_guard lock(mutex_);
  for (const PvarDescription& pvar : selected_) {
    if (pvar.binding == MPI_T_BIND_MPI_COMM) {
      bind(pvar, &comm, comm_id);
    }
  }
}

// Open MPI reads the object through obj_handle as a pointer to the MPI_Comm variable (the
// standard's "address of the handle"), so the communicator is passed by the address of a copy the
// handle owns.
void PvarSampler::bind(const PvarDescription& pvar, MPI_Comm* comm, std::optional<std::int64_t> comm_id) {
  if (!opened_) {
    return;
  }
  Handle handle{&pvar,    comm_id, comm != nullptr ? std::make_unique<MPI_Comm>(*comm) : nullptr, {}, 0,
                now_ns(), {}};
  if (const int rc =
          MPI_T_pvar_handle_alloc(session_, pvar.index, handle.comm.get(), &handle.handle, &handle.elements);
      rc != MPI_SUCCESS) {
    report_once(profiler_, "MPI_T_pvar_handle_alloc", rc, "that pvar is skipped (see pvar_handles)");
    record_handle(pvar, comm_id, {}, "handle allocation failed: " + mpit_error_name(rc), handle.created_ns,
                  {});
    return;
  }
  if (!pvar.continuous) {
    if (const int rc = MPI_T_pvar_start(session_, handle.handle); rc != MPI_SUCCESS) {
      MPI_T_pvar_handle_free(session_, &handle.handle);
      record_handle(pvar, comm_id, std::int64_t{handle.elements}, "start failed: " + mpit_error_name(rc),
                    handle.created_ns, {});
      return;
    }
  }
  handle.buffer.assign(value_size(pvar.datatype) * static_cast<std::size_t>(std::max(handle.elements, 1)), 0);
  handles_.push_back(std::move(handle));
}

void PvarSampler::unbind_communicator(MPI_Comm comm) {
  std::lock_guard lock(mutex_);
  const auto bound_to_comm = [comm](const Handle& handle) { return handle.comm && *handle.comm == comm; };
  for (Handle& handle : handles_) {
    if (bound_to_comm(handle)) {
      free_handle(handle);
    }
  }
  std::erase_if(handles_, bound_to_comm);
}

void PvarSampler::free_handle(Handle& handle) {
  if (!handle.pvar->continuous) {
    MPI_T_pvar_stop(session_, handle.handle);
  }
  MPI_T_pvar_handle_free(session_, &handle.handle);
  record_handle(*handle.pvar, handle.comm_id, std::int64_t{handle.elements}, "sampled", handle.created_ns,
                now_ns());
}

void PvarSampler::sample(Trigger trigger, std::optional<std::uint64_t> call_id) {
  std::lock_guard lock(mutex_);
  if (handles_.empty() || !profiler_.collecting()) {
    return;
  }
  std::vector<std::vector<SqlValue>> rows;
  const std::int64_t rank = profiler_.identity().run_rank;
  const auto call = call_id ? std::optional<std::int64_t>(static_cast<std::int64_t>(*call_id)) : std::nullopt;
  for (Handle& handle : handles_) {
    if (const int rc = MPI_T_pvar_read(session_, handle.handle, handle.buffer.data()); rc != MPI_SUCCESS) {
      report_once(profiler_, "MPI_T_pvar_read of " + handle.pvar->name, rc, "its samples are missing");
      continue;
    }
    const std::int64_t time_ns = now_ns();
    for (int element = 0; element < handle.elements; ++element) {
      rows.push_back({rank, std::int64_t{handle.pvar->index}, optional_value(handle.comm_id), time_ns,
                      decode_value(handle.pvar->datatype, handle.buffer.data(), element),
                      std::int64_t{element}, static_cast<std::int64_t>(trigger), optional_value(call)});
    }
  }
  profiler_.store_rows(kInsertSample, std::move(rows));
}

void PvarSampler::close() {
  std::lock_guard lock(mutex_);
  if (!opened_) {
    return;
  }
  for (Handle& handle : handles_) {
    free_handle(handle);
  }
  handles_.clear();
  MPI_T_pvar_session_free(&session_);
  opened_ = false;
  profiler_.store_rows(kInsertHandle, std::move(handle_rows_));
  handle_rows_.clear();
}

int PvarSampler::handle_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(handles_.size());
}

// Kept until close(): a handle's row is complete only when it is freed.
void PvarSampler::record_handle(const PvarDescription& pvar, std::optional<std::int64_t> comm_id,
                                SqlValue elements, const std::string& status, std::int64_t created_ns,
                                SqlValue freed_ns) {
  handle_rows_.push_back({std::int64_t{profiler_.identity().run_rank}, std::int64_t{pvar.index},
                          optional_value(comm_id), std::move(elements), status, created_ns,
                          std::move(freed_ns)});
}

} // namespace commlens::mpit
