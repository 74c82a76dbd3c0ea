#include "cvar_snapshot.hpp"

#include "mpi_header.hpp"
#include "mpit_names.hpp"

#include <vector>

namespace commlens::mpit {

namespace {

// The value of an unbound cvar as text, or NULL when it cannot be read.
SqlValue read_cvar(int index, MPI_Datatype datatype) {
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) {
    return std::monostate{};
  }
  // Open MPI reports count 1 for string cvars and copies the whole string: leave room for it.
  std::vector<unsigned char> buffer(static_cast<std::size_t>(count > 0 ? count : 1) * 8 + 4096, 0);
  SqlValue value = std::monostate{};
  if (MPI_T_cvar_read(handle, buffer.data()) == MPI_SUCCESS) {
    const int elements = datatype == MPI_CHAR ? static_cast<int>(buffer.size()) - 1 : count;
    value = value_text(datatype, buffer.data(), elements);
  }
  MPI_T_cvar_handle_free(&handle);
  return value;
}

} // namespace

int store_cvar_snapshot(Profiler& profiler) {
  int count = 0;
  if (const int rc = MPI_T_cvar_get_num(&count); rc != MPI_SUCCESS) {
    report_once(profiler, "MPI_T_cvar_get_num", rc, "no control variables are stored");
    return 0;
  }
  std::vector<std::vector<SqlValue>> rows;
  const std::int64_t rank = profiler.identity().run_rank;
  for (int index = 0; index < count; ++index) {
    char name[256] = {};
    char description[1024] = {};
    int name_length = sizeof name;
    int description_length = sizeof description;
    int verbosity = 0, binding = 0, scope = 0;
    MPI_Datatype datatype = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype;
    if (MPI_T_cvar_get_info(index, name, &name_length, &verbosity, &datatype, &enumtype, description,
                            &description_length, &binding, &scope) != MPI_SUCCESS) {
      continue; // an unloaded component's variable
    }
    SqlValue value = binding == MPI_T_BIND_NO_OBJECT && value_size(datatype) != 0 ? read_cvar(index, datatype)
                                                                                  : SqlValue{};
    rows.push_back({rank, std::string(name), std::move(value), std::string(datatype_name(datatype)),
                    std::int64_t{scope}, std::string(description)});
  }
  const int stored = static_cast<int>(rows.size());
  profiler.store_rows("INSERT OR REPLACE INTO cvars (rank, name, value, datatype, scope, description) VALUES "
                      "(?, ?, ?, ?, ?, ?)",
                      std::move(rows));
  return stored;
}

} // namespace commlens::mpit
