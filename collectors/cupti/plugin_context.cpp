#include "plugin_context.hpp"

#include <cupti.h>

#include <cstdio>
#include <mutex>

namespace commlens::cuda {

namespace {
contract::CudaPluginHost the_host;
thread_local std::uint64_t thread_mpi_call = 0;
std::mutex error_mutex;
std::string first_error_text;
} // namespace

const contract::CudaPluginHost& host() noexcept {
  return the_host;
}

void set_host(const contract::CudaPluginHost& host) {
  the_host = host;
}

std::uint64_t current_mpi_call() noexcept {
  return thread_mpi_call;
}

void set_current_mpi_call(std::uint64_t call_id) noexcept {
  thread_mpi_call = call_id;
}

bool cupti_ok(int result, const char* what) {
  if (result == CUPTI_SUCCESS) {
    return true;
  }
  const char* text = nullptr;
  cuptiGetResultString(static_cast<CUptiResult>(result), &text);
  const std::lock_guard lock(error_mutex);
  if (first_error_text.empty()) {
    first_error_text = std::string(what) + " failed: " + (text != nullptr ? text : "unknown CUPTI error");
    if (the_host.world_rank == 0) {
      std::fprintf(stderr, "commlens: CUDA collector: %s\n", first_error_text.c_str());
    }
  }
  return false;
}

std::string first_error() {
  const std::lock_guard lock(error_mutex);
  return first_error_text;
}

} // namespace commlens::cuda
