#pragma once
// One MPI_T session holding a handle per selected pvar and bound object (communicator-bound pvars
// get one per communicator, allocated as communicators are created and freed before they are), and
// the reads of all of them into `pvar_samples`. Every method takes the sampler's lock: under
// MPI_THREAD_MULTIPLE, call boundaries and communicator hooks of several threads may meet.
#include "commlens/profiler/profiler.hpp"
#include "mpi_header.hpp"
#include "pvar_catalog.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace commlens::mpit {

// Why a sample was taken (pvar_samples.trigger).
enum class Trigger : std::int64_t { Period = 0, CallEntry = 1, CallExit = 2, Init = 3, Finalize = 4 };

class PvarSampler {
public:
  // Opens the session; opened() is false when MPI_T refused (reported once).
  PvarSampler(Profiler& profiler, std::vector<PvarDescription> selected);
  ~PvarSampler();
  PvarSampler(const PvarSampler&) = delete;
  PvarSampler& operator=(const PvarSampler&) = delete;

  bool opened() const noexcept { return opened_; }
  // Handles for the pvars bound to no object, and those of communicator-bound pvars on `comm`.
  void bind_unbound();
  void bind_communicator(MPI_Comm comm, std::int64_t comm_id);
  void unbind_communicator(MPI_Comm comm);
  // Reads every handle and stores one row per element. call_id: the call at whose boundary.
  void sample(Trigger trigger, std::optional<std::uint64_t> call_id = std::nullopt);
  // Frees every handle and the session (MPI_Finalize); handles stored in `pvar_handles`.
  void close();
  int handle_count() const;

private:
  struct Handle {
    const PvarDescription* pvar;
    std::optional<std::int64_t> comm_id;
    std::unique_ptr<MPI_Comm> comm; // MPI_T may keep the address it was given: it must not move
    MPI_T_pvar_handle handle;
    int elements;
    std::int64_t created_ns;
    std::vector<unsigned char> buffer;
  };
  void bind(const PvarDescription& pvar, MPI_Comm* comm, std::optional<std::int64_t> comm_id);
  void free_handle(Handle& handle);
  void record_handle(const PvarDescription& pvar, std::optional<std::int64_t> comm_id, SqlValue elements,
                     const std::string& status, std::int64_t created_ns, SqlValue freed_ns);
  std::int64_t now_ns() const noexcept { return profiler_.relative_ns(now_ticks()); }

  Profiler& profiler_;
  std::vector<PvarDescription> selected_;
  mutable std::mutex mutex_;
  MPI_T_pvar_session session_{};
  bool opened_ = false;
  std::vector<Handle> handles_;
  std::vector<std::vector<SqlValue>> handle_rows_;
};

} // namespace commlens::mpit
