#include "cuda_records.hpp"

#include <algorithm>
#include <cctype>

namespace commlens::cuda {

const char* memory_kind_name(MemoryKind kind) noexcept {
  static constexpr const char* kNames[] = {"unknown", "pageable", "pinned", "device", "array", "managed"};
  return kNames[static_cast<int>(kind)];
}

const char* copy_direction_name(CopyDirection direction) noexcept {
  static constexpr const char* kNames[] = {"HtoD", "DtoH", "HtoA", "AtoH", "AtoA",   "AtoD",
                                           "DtoA", "DtoD", "HtoH", "PtoP", "unknown"};
  return kNames[static_cast<int>(direction)];
}

const char* copy_path_name(CopyPath path) noexcept {
  static constexpr const char* kNames[] = {"host_staged", "peer",         "ipc",  "same_device",
                                           "managed",     "host_to_host", "other"};
  return kNames[static_cast<int>(path)];
}

const char* peer_link_name(PeerLink link) noexcept {
  switch (link) {
  case PeerLink::NvLink:
    return "nvlink";
  case PeerLink::Pcie:
    return "pcie";
  default:
    return nullptr;
  }
}

const char* sync_kind_name(SyncKind kind) noexcept {
  static constexpr const char* kNames[] = {"unknown", "event_synchronize", "stream_wait_event",
                                           "stream_synchronize", "context_synchronize"};
  return kNames[static_cast<int>(kind)];
}

const char* api_domain_name(ApiDomain domain) noexcept {
  return domain == ApiDomain::Driver ? "driver" : "runtime";
}

std::int64_t api_function_id(ApiDomain domain, std::uint32_t callback_id) noexcept {
  return (domain == ApiDomain::Driver ? kDriverApiIds : 0) + callback_id;
}

std::string api_function_name(ApiDomain domain, std::string_view callback_name) {
  const std::size_t suffix = callback_name.rfind("_v");
  const std::string_view digits =
      suffix == std::string_view::npos ? std::string_view{} : callback_name.substr(suffix + 2);
  const bool version_suffix = domain == ApiDomain::Runtime && !digits.empty() &&
                              std::all_of(digits.begin(), digits.end(),
                                          [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return std::string(version_suffix ? callback_name.substr(0, suffix) : callback_name);
}

} // namespace commlens::cuda
