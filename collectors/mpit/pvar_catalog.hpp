#pragma once
// Every performance variable the MPI library exposes, read once at start-up: the `pvars` table, and
// the ones COMMLENS_PVARS selects for sampling.
#include "commlens/profiler/profiler.hpp"
#include "mpi_header.hpp"

#include <string>
#include <vector>

namespace commlens::mpit {

struct PvarDescription {
  int index = 0; // MPI_T pvar index, the `pvars.id`
  std::string name;
  int pvar_class = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int binding = 0;
  bool continuous = true;
  bool readonly = true;
  bool selected = false;
};

// True when `name` equals a pattern or starts with one ending in '*' ("*" matches everything).
bool matches_any(const std::string& name, const std::vector<std::string>& patterns);

// Reads the catalogue (pvars with an invalid index, which Open MPI leaves for unloaded components,
// are left out), stores it, and returns it. `patterns` decides PvarDescription::selected.
std::vector<PvarDescription> read_pvar_catalog(Profiler& profiler, const std::vector<std::string>& patterns);

} // namespace commlens::mpit
