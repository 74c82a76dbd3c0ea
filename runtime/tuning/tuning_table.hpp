#pragma once
// The allreduce tuning table: which algorithm the runtime runs for a call, from the call's shape
// (GPUs of the communicator, whether ranks share them, in place, size). Rules are tried in order;
// the first that matches and is safe for the call wins. Safety is code, not table: a table can
// only choose among algorithms that compute the right result for the call (docs/runtime.md).
// Pure C++ (no CUDA), so the CLI's `tune` and CPU-only tests use it too.
#include "data_movement_rules.hpp"
#include "trees/tree_shape.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::runtime::tuning {

// The allreduce's algorithms, one enum from the table through selection to the kernels
// (collectives/allreduce/). Hierarchical is no table's choice: a communicator spanning nodes
// always runs it (selection/), so kAlgorithms, what a table or COMMLENS_RUNTIME_ALGORITHM may
// name, leaves it out.
enum class AllreduceAlgorithm { OneShot, TwoShot, OneShotStriped, Hierarchical };
inline constexpr AllreduceAlgorithm kAlgorithms[] = {AllreduceAlgorithm::OneShot, AllreduceAlgorithm::TwoShot,
                                                     AllreduceAlgorithm::OneShotStriped};
// one_shot, two_shot, one_shot_striped, hierarchical
const char* algorithm_name(AllreduceAlgorithm algorithm) noexcept;
std::optional<AllreduceAlgorithm> parse_algorithm(std::string_view name);

struct Rule {
  GpuCount gpus = GpuCount::Any;
  std::optional<bool> ranks_share_gpu{};    // unset: either
  std::optional<bool> in_place{};           // unset: either
  std::optional<std::uint64_t> max_bytes{}; // inclusive; unset: any size
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::OneShot;
  std::uint32_t host_percent = 0; // one_shot_striped: the share carried over the host path
  std::string why{};              // free text kept with the rule (measurements, reasons)
  OptionalMeasurement measured{}; // format 2: the measurement it came from
  RankRange ranks{};              // "min_ranks", "max_ranks"

  bool operator==(const Rule&) const = default;
};

// Device point-to-point: a rendezvous message of at least min_bytes between two GPUs sends
// host_percent of its bytes over the host path beside the peer copy (rendezvous_protocol.hpp).
struct PointToPointStripe {
  std::uint64_t min_bytes = std::uint64_t{16} << 20;
  std::uint32_t host_percent = 0;
  std::string why{};
  OptionalMeasurement measured{};

  bool operator==(const PointToPointStripe&) const = default;
};

// The rooted collectives on device buffers (bcast, reduce): the tree's shape per level, the
// segment size and how many segments a rank keeps in flight (tree_rules.hpp chooses).
enum class RootedCollective { Bcast, Reduce };
struct TreeRule {
  std::optional<RootedCollective> collective; // unset: both
  GpuCount gpus = GpuCount::Any;
  std::optional<bool> ranks_share_gpu;    // unset: either
  std::optional<std::uint64_t> max_bytes; // inclusive; unset: any size
  std::optional<bool> mps;                // under CUDA MPS (mps_detection.hpp); unset: either
  trees::LevelShapes shapes;
  std::uint64_t segment_bytes = std::uint64_t{256} << 10;
  std::uint32_t window = 4;
  // Bcast only: each parent writes the segments into its children's buffers, so one context does a
  // GPU's copies (ranks time-sharing a GPU without MPS pay a time slice per context that works).
  bool push = false;
  std::uint32_t streams = 1; // per rank, its segments round robin over them ("streams", absent: 1)
  std::string why;
  OptionalMeasurement measured;
  RankRange ranks; // "min_ranks", "max_ranks"

  bool operator==(const TreeRule&) const = default;
};

// The resident kernel (ranks sharing one GPU under MPS): up to which contribution size a
// collective takes it (resident_rules.hpp). Its rules have that one shape (measured_rules.cpp).
struct ResidentRule {
  std::string collective{};    // allreduce, bcast, reduce, or a data-movement collective's name
  std::uint64_t max_bytes = 0; // the largest contribution it takes (0: none)
  std::string why{};
  OptionalMeasurement measured{};
  RankRange ranks{}; // "min_ranks", "max_ranks"

  bool operator==(const ResidentRule&) const = default;
};

struct Table {
  std::string gpu{}; // what the table was measured on (H100, or what `tune` ran on; "any": default rules)
  std::vector<Rule> rules{};
  PointToPointStripe point_to_point{};       // "point_to_point" (optional: these defaults, no striping)
  std::vector<MovementRule> data_movement{}; // "data_movement" (optional: direct for every call)
  std::vector<TreeRule> trees{};             // "trees" (optional: tree_rules.hpp's fixed choice)
  std::vector<ResidentRule> resident{};      // "resident" (optional: resident_rules.hpp's defaults)
  std::vector<Measurement> measurements{};   // "measurements" (format 2): what the rules' "measured" name
};

// A table file that cannot be used; what() names the part ("rules[2].gpus: ...").
class TableError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Format 1: rules only. Format 2 (what `commlens tune` writes): "measurements", and a "measured"
// object on every rule a measurement produced. Both are read.
inline constexpr int kTableFormat = 2;
// Throws TableError for bad JSON, an unknown format, unknown keys or values out of range, and (format
// 2) a rule naming a measurement the table does not list, or measurements in a format 1 table.
Table parse_table(std::string_view json_text);
// The JSON text of a table, as parse_table reads it (indented, one rule per object).
std::string table_json(const Table& table);

struct CallShape {
  int ranks = 2;
  int gpus = 2; // distinct GPUs of the communicator's ranks, 1..ranks
  bool in_place = false;
  std::uint64_t bytes = 0;
};

// Why `algorithm` would compute a wrong result for the call (or cannot run), else null:
// one-shot variants write outputs other ranks may still read as inputs, so in place only when one
// GPU does all the work; striping exists for exactly two ranks on two GPUs with a host share.
const char* unsafe_reason(AllreduceAlgorithm algorithm, const CallShape& call,
                          std::uint32_t host_percent) noexcept;

struct ChoiceSettings {
  std::optional<AllreduceAlgorithm> forced = {};  // COMMLENS_RUNTIME_ALGORITHM (unset: auto)
  std::optional<std::uint32_t> host_percent = {}; // COMMLENS_RUNTIME_HOST_PERCENT overrides the rules'
};

struct Choice {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::OneShot;
  std::uint32_t host_percent = 0;
  std::string source; // runtime_ops.decision_source: forced, table:NAME rule N, fallback
};

// The forced algorithm when safe, else the first matching safe rule of `table` (labelled
// `table_name` in the source), else the safe default: one-shot, or two-shot in place.
Choice choose(const Table& table, std::string_view table_name, const CallShape& call,
              const ChoiceSettings& settings);

// The bytes at the end of a rendezvous message of `bytes` to carry over the host path (0: no
// striping), a multiple of 4 KiB. The table's share applies between two GPUs; forced_percent
// (COMMLENS_RUNTIME_HOST_PERCENT) overrides it and applies between ranks sharing a GPU too (where
// the host path only adds work: for tests and measurements).
std::uint64_t p2p_host_bytes(const PointToPointStripe& stripe, std::optional<std::uint32_t> forced_percent,
                             std::uint64_t bytes, bool same_gpu);

} // namespace commlens::runtime::tuning
