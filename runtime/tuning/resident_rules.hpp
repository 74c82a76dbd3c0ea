#pragma once
// Up to which size each collective runs on the resident kernel (ranks sharing one GPU under MPS):
// the table's "resident" section, measured by `commlens tune --ops resident` against the table's
// other algorithms, else built-in limits. COMMLENS_RUNTIME_RESIDENT_BYTES caps every limit (the
// kernel's halves are that large).
#include "runtime_collective_names.hpp"
#include "tuning_table.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace commlens::runtime::tuning {

// The collectives the resident kernel runs, by the names the table uses: every blocking collective
// of the runtime (generated from mpi_functions.spec).
inline constexpr auto& kResidentCollectives = contract::kBlockingRuntimeCollectives;

// Without a rule: the allreduce up to 16 KiB (at 64 KiB the shared-GPU kernel, where one leader
// reduces for every rank on the GPU, measured faster than the resident kernel, where every rank
// reduces every contribution itself: docs/performance-runtime.md, "The resident kernel"); the
// others up to the setting.
inline constexpr std::uint64_t kDefaultResidentAllreduceBytes = 16 * 1024;

struct ResidentLimit {
  std::uint64_t max_bytes = ~std::uint64_t{0};
  std::size_t rule = 0; // the table's rule, from 1; 0: the default
};

// The first rule for `collective` whose rank range holds `ranks`, else the default. On every
// eligible call's path: no allocation.
ResidentLimit resident_limit(const Table& table, std::string_view collective, int ranks) noexcept;
// runtime_ops.decision_source's start: "table:NAME resident rule N" or "default".
std::string resident_limit_source(std::string_view table_name, const ResidentLimit& limit);

// The table's "resident" array; throws TableError naming the part ("resident[1].max_bytes: ...").
std::vector<ResidentRule> parse_resident_rules(const nlohmann::json& array);
nlohmann::ordered_json resident_rules_json(std::span<const ResidentRule> rules);

} // namespace commlens::runtime::tuning
