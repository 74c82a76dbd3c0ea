#pragma once
// The tables shipped inside the library (runtime/tuning/*.json, embedded at build time so nothing
// depends on install paths) and the choice of the table a run uses. A GPU with a measured table
// (h100.json) gets its measured rules first, then the default rules (default.json) for every shape
// the measurements do not cover; any other GPU gets the default rules alone.
#include "tuning_table.hpp"

#include <string>
#include <string_view>

namespace commlens::runtime::tuning {

struct NamedTable {
  Table table;
  std::string name; // for decision_source: h100, default, or file
};

// h100 when the GPU's name (cudaDeviceProp::name) says so (its measured rules, then the default
// rules), else default.
NamedTable shipped_table_for_gpu(std::string_view gpu_name);

struct LoadedTable {
  NamedTable named;
  std::string description; // the run table's runtime_tuning: shipped:h100, file:/path, ...
  std::string problem;     // why `file` was not used (empty when it was, or none was given)
};

// The table in `file` (its rules, then the default rules, as for a shipped measured table) when one
// is named and valid, else the shipped table for the GPU.
LoadedTable load_table(std::string_view gpu_name, const std::string& file);

} // namespace commlens::runtime::tuning
