#pragma once
// The tuning table's rules for the collectives that move blocks between ranks (allgather, gather,
// scatter, alltoall, reduce_scatter_block, reduce_scatter), the table's "data_movement" array:
// which of their algorithms runs, by collective, GPUs, whether ranks share them, whether CUDA MPS
// runs (where several contexts working at once cost time slices or not), and block size.
// Every algorithm is safe for every call the runtime takes, so the table only chooses speed.
// Pure C++ (no CUDA), like tuning_table.hpp.
#include "rule_measurement.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::runtime::tuning {

// The communicator's distinct GPUs: 1, 2, more than 2, or any count (every rule kind uses it).
enum class GpuCount { One, Two, More, Any };

// The communicator sizes a rule applies to, both ends inclusive, an unset end open. `commlens tune`
// sets them when one table holds measurements of one shape at several rank counts: each rank
// count's rules then cover the sizes nearer to it than to the next measured count
// (measured_rules.hpp); with one rank count, neither is set and the rules apply to every size.
struct RankRange {
  std::optional<int> min_ranks;
  std::optional<int> max_ranks;

  bool contains(int ranks) const noexcept {
    return (!min_ranks || ranks >= *min_ranks) && (!max_ranks || ranks <= *max_ranks);
  }
  bool operator==(const RankRange&) const = default;
};

enum class Collective { Allgather, Gather, Scatter, Alltoall, ReduceScatterBlock, ReduceScatter };
inline constexpr Collective kCollectives[] = {
    Collective::Allgather,          Collective::Gather,       Collective::Scatter, Collective::Alltoall,
    Collective::ReduceScatterBlock, Collective::ReduceScatter};
// allgather, gather, scatter, alltoall, reduce_scatter_block, reduce_scatter
const char* collective_name(Collective collective) noexcept;
std::optional<Collective> parse_collective(std::string_view name);

// direct: every rank copies (or reduces) what it receives from the peers' buffers itself.
// gpu_leader: one rank per GPU does that for every rank on its GPU, in one process's launches:
// ranks sharing a GPU then run one stream of kernels instead of one per process (what small blocks
// pay for without MPS, where every context that works in a call costs the GPU a time slice). The
// GPU's first rank leads it, except that gather and scatter are led on the root's GPU by the root
// (it holds the buffer every copy touches: scatter's root pushes every block into the peers'
// outputs, as gather's root pulls them), so with every rank on one GPU every collective runs in one
// context. With one rank per GPU gpu_leader is direct; gather's gpu_leader is always direct.
// staged: the host-staged baseline (staged_baseline.hpp), chosen where it measured faster.
enum class MovementAlgorithm { Direct, GpuLeader, Staged };
const char* movement_algorithm_name(MovementAlgorithm algorithm) noexcept;
std::optional<MovementAlgorithm> parse_movement_algorithm(std::string_view name);

struct MovementRule {
  std::vector<Collective> collectives{}; // empty: every one
  GpuCount gpus = GpuCount::Any;
  std::optional<bool> ranks_share_gpu{};          // unset: either
  std::optional<bool> mps{};                      // under CUDA MPS (mps_detection.hpp); unset: either
  std::optional<std::uint64_t> max_block_bytes{}; // inclusive; unset: any size
  MovementAlgorithm algorithm = MovementAlgorithm::Direct;
  std::string why{};
  OptionalMeasurement measured{}; // format 2: the measurement it came from
  RankRange ranks{};              // "min_ranks", "max_ranks"

  bool operator==(const MovementRule&) const = default;
};

struct MovementShape {
  Collective collective = Collective::Allgather;
  int ranks = 2;
  int gpus = 2;
  std::uint64_t block_bytes = 0; // what one rank sends one peer (reduce_scatter: the mean block)
  bool mps = false;              // every rank's process saw MPS (CommunicatorEngine::mps)
};

struct MovementChoice {
  MovementAlgorithm algorithm = MovementAlgorithm::Direct;
  std::string source; // runtime_ops.decision_source: table:NAME movement rule N, or fallback
};

// The first rule of `rules` that matches, else direct ("fallback").
MovementChoice choose_movement(const std::vector<MovementRule>& rules, std::string_view table_name,
                               const MovementShape& call);

} // namespace commlens::runtime::tuning
