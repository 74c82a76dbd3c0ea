#pragma once
// The tables shipped inside the library (runtime/tuning/*.json, embedded at build time so nothing
// depends on install paths) and the choice of the table a run uses.
#include "tuning_table.hpp"

#include <string>
#include <string_view>

namespace commlens::runtime::tuning {

struct NamedTable {
  Table table;
  std::string name; // for decision_source: h100, h200, generic, or file
};

// h100 or h200 when the GPU's name (cudaDeviceProp::name) says so, else generic.
NamedTable shipped_table_for_gpu(std::string_view gpu_name);

struct LoadedTable {
  NamedTable named;
  std::string description; // the run table's runtime_tuning: shipped:h100, file:/path, ...
  std::string problem;     // why `file` was not used (empty when it was, or none was given)
};

// The table in `file` when one is named and valid, else the shipped table for the GPU.
LoadedTable load_table(std::string_view gpu_name, const std::string& file);

} // namespace commlens::runtime::tuning
