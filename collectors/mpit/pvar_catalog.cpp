#include "pvar_catalog.hpp"

#include "mpit_names.hpp"

namespace commlens::mpit {

bool matches_any(const std::string& name, const std::vector<std::string>& patterns) {
  for (const std::string& pattern : patterns) {
    const bool prefix = pattern.ends_with('*');
    if (prefix ? name.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1))
               : name == pattern) {
      return true;
    }
  }
  return false;
}

std::vector<PvarDescription> read_pvar_catalog(Profiler& profiler, const std::vector<std::string>& patterns) {
  std::vector<PvarDescription> catalog;
  int count = 0;
  if (const int rc = MPI_T_pvar_get_num(&count); rc != MPI_SUCCESS) {
    report_once(profiler, "MPI_T_pvar_get_num", rc, "no performance variables are sampled");
    return catalog;
  }
  std::vector<std::vector<SqlValue>> rows;
  for (int index = 0; index < count; ++index) {
    char name[256] = {};
    char description[1024] = {};
    int name_length = sizeof name;
    int description_length = sizeof description;
    int verbosity = 0, binding = 0, readonly = 0, continuous = 0, atomic = 0, pvar_class = 0;
    MPI_Datatype datatype = MPI_DATATYPE_NULL;
    MPI_T_enum enumtype;
    // An invalid index is a pvar whose component was unloaded: skipped, not an error.
    if (MPI_T_pvar_get_info(index, name, &name_length, &verbosity, &pvar_class, &datatype, &enumtype,
                            description, &description_length, &binding, &readonly, &continuous,
                            &atomic) != MPI_SUCCESS) {
      continue;
    }
    PvarDescription pvar{index, name, pvar_class, datatype, binding, continuous != 0, readonly != 0, false};
    pvar.selected = matches_any(pvar.name, patterns) && value_size(datatype) != 0 && datatype != MPI_CHAR;
    rows.push_back({std::int64_t{index}, pvar.name, std::string(pvar_class_name(pvar_class)),
                    std::string(datatype_name(datatype)), std::string(binding_name(binding)),
                    std::int64_t{continuous != 0}, std::int64_t{readonly != 0}, std::int64_t{verbosity},
                    std::string(description), std::int64_t{pvar.selected}});
    catalog.push_back(std::move(pvar));
  }
  profiler.store_rows(
      "INSERT OR IGNORE INTO pvars (id, name, class, datatype, binding, continuous, readonly, "
      "verbosity, description, selected) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      std::move(rows));
  return catalog;
}

} // namespace commlens::mpit
