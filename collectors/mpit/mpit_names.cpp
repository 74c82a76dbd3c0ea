#include "mpit_names.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <mutex>
#include <set>

namespace commlens::mpit {

namespace {

template <typename T> T load(const unsigned char* buffer, int index) noexcept {
  T value;
  std::memcpy(&value, buffer + static_cast<std::size_t>(index) * sizeof(T), sizeof(T));
  return value;
}

} // namespace

const char* pvar_class_name(int pvar_class) noexcept {
  switch (pvar_class) {
  case MPI_T_PVAR_CLASS_STATE:
    return "state";
  case MPI_T_PVAR_CLASS_LEVEL:
    return "level";
  case MPI_T_PVAR_CLASS_SIZE:
    return "size";
  case MPI_T_PVAR_CLASS_PERCENTAGE:
    return "percentage";
  case MPI_T_PVAR_CLASS_HIGHWATERMARK:
    return "highwatermark";
  case MPI_T_PVAR_CLASS_LOWWATERMARK:
    return "lowwatermark";
  case MPI_T_PVAR_CLASS_COUNTER:
    return "counter";
  case MPI_T_PVAR_CLASS_AGGREGATE:
    return "aggregate";
  case MPI_T_PVAR_CLASS_TIMER:
    return "timer";
  case MPI_T_PVAR_CLASS_GENERIC:
    return "generic";
  default:
    return "unknown";
  }
}

const char* binding_name(int binding) noexcept {
  switch (binding) {
  case MPI_T_BIND_NO_OBJECT:
    return "none";
  case MPI_T_BIND_MPI_COMM:
    return "communicator";
  case MPI_T_BIND_MPI_DATATYPE:
    return "datatype";
  case MPI_T_BIND_MPI_ERRHANDLER:
    return "errhandler";
  case MPI_T_BIND_MPI_FILE:
    return "file";
  case MPI_T_BIND_MPI_GROUP:
    return "group";
  case MPI_T_BIND_MPI_OP:
    return "op";
  case MPI_T_BIND_MPI_REQUEST:
    return "request";
  case MPI_T_BIND_MPI_WIN:
    return "window";
  case MPI_T_BIND_MPI_MESSAGE:
    return "message";
  case MPI_T_BIND_MPI_INFO:
    return "info";
  default:
    return "unknown";
  }
}

const char* datatype_name(MPI_Datatype type) noexcept {
  if (type == MPI_INT)
    return "MPI_INT";
  if (type == MPI_UNSIGNED)
    return "MPI_UNSIGNED";
  if (type == MPI_UNSIGNED_LONG)
    return "MPI_UNSIGNED_LONG";
  if (type == MPI_UNSIGNED_LONG_LONG)
    return "MPI_UNSIGNED_LONG_LONG";
  if (type == MPI_COUNT)
    return "MPI_COUNT";
  if (type == MPI_CHAR)
    return "MPI_CHAR";
  if (type == MPI_DOUBLE)
    return "MPI_DOUBLE";
  return "other";
}

std::string mpit_error_name(int code) {
  const char* name = "error";
  switch (code) {
  case MPI_T_ERR_MEMORY:
    name = "MPI_T_ERR_MEMORY";
    break;
  case MPI_T_ERR_NOT_INITIALIZED:
    name = "MPI_T_ERR_NOT_INITIALIZED";
    break;
  case MPI_T_ERR_CANNOT_INIT:
    name = "MPI_T_ERR_CANNOT_INIT";
    break;
  case MPI_T_ERR_INVALID_INDEX:
    name = "MPI_T_ERR_INVALID_INDEX";
    break;
  case MPI_T_ERR_INVALID_HANDLE:
    name = "MPI_T_ERR_INVALID_HANDLE";
    break;
  case MPI_T_ERR_OUT_OF_HANDLES:
    name = "MPI_T_ERR_OUT_OF_HANDLES";
    break;
  case MPI_T_ERR_OUT_OF_SESSIONS:
    name = "MPI_T_ERR_OUT_OF_SESSIONS";
    break;
  case MPI_T_ERR_INVALID_SESSION:
    name = "MPI_T_ERR_INVALID_SESSION";
    break;
  case MPI_T_ERR_PVAR_NO_STARTSTOP:
    name = "MPI_T_ERR_PVAR_NO_STARTSTOP";
    break;
  case MPI_T_ERR_PVAR_NO_ATOMIC:
    name = "MPI_T_ERR_PVAR_NO_ATOMIC";
    break;
  default:
    break;
  }
  return fmt::format("{} ({})", name, code);
}

std::size_t value_size(MPI_Datatype type) noexcept {
  if (type == MPI_INT)
    return sizeof(int);
  if (type == MPI_UNSIGNED)
    return sizeof(unsigned);
  if (type == MPI_UNSIGNED_LONG)
    return sizeof(unsigned long);
  if (type == MPI_UNSIGNED_LONG_LONG)
    return sizeof(unsigned long long);
  if (type == MPI_COUNT)
    return sizeof(MPI_Count);
  if (type == MPI_CHAR)
    return sizeof(char);
  if (type == MPI_DOUBLE)
    return sizeof(double);
  return 0;
}

SqlValue decode_value(MPI_Datatype type, const unsigned char* buffer, int index) noexcept {
  // Unsigned counters beyond 2^63 do not occur in practice; they wrap rather than lose precision.
  if (type == MPI_INT)
    return std::int64_t{load<int>(buffer, index)};
  if (type == MPI_UNSIGNED)
    return std::int64_t{load<unsigned>(buffer, index)};
  if (type == MPI_UNSIGNED_LONG)
    return static_cast<std::int64_t>(load<unsigned long>(buffer, index));
  if (type == MPI_UNSIGNED_LONG_LONG)
    return static_cast<std::int64_t>(load<unsigned long long>(buffer, index));
  if (type == MPI_COUNT)
    return static_cast<std::int64_t>(load<MPI_Count>(buffer, index));
  if (type == MPI_DOUBLE)
    return load<double>(buffer, index);
  return std::monostate{};
}

std::string value_text(MPI_Datatype type, const unsigned char* buffer, int count) {
  if (type == MPI_CHAR) {
    return std::string(reinterpret_cast<const char*>(buffer),
                       strnlen(reinterpret_cast<const char*>(buffer), count));
  }
  std::string text;
  for (int i = 0; i < count; ++i) {
    const SqlValue value = decode_value(type, buffer, i);
    text += i == 0 ? "" : ",";
    if (const auto* integer = std::get_if<std::int64_t>(&value)) {
      text += std::to_string(*integer);
    } else if (const auto* real = std::get_if<double>(&value)) {
      text += fmt::format("{}", *real);
    }
  }
  return text;
}

void report_once(const Profiler& profiler, const std::string& what, int code, const char* consequence) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  {
    std::lock_guard lock(mutex);
    if (!reported.insert(what).second) {
      return;
    }
  }
  std::fprintf(stderr, "commlens: rank %d: %s failed: %s; %s\n", profiler.identity().world_rank, what.c_str(),
               mpit_error_name(code).c_str(), consequence);
}

} // namespace commlens::mpit
