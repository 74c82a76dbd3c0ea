#pragma once
// The tuning table's rules for the collectives that move blocks between ranks (allgather, gather,
// scatter, alltoall, reduce_scatter_block, reduce_scatter), the table's "data_movement" array:
// which of their algorithms runs, by collective, GPUs, whether ranks share them, and block size.
// Both algorithms are safe for every call the runtime takes, so the table only chooses speed.
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

enum class Collective { Allgather, Gather, Scatter, Alltoall, ReduceScatterBlock, ReduceScatter };
inline constexpr Collective kCollectives[] = {
    Collective::Allgather,          Collective::Gather,       Collective::Scatter, Collective::Alltoall,
    Collective::ReduceScatterBlock, Collective::ReduceScatter};
// allgather, gather, scatter, alltoall, reduce_scatter_block, reduce_scatter
const char* collective_name(Collective collective) noexcept;
std::optional<Collective> parse_collective(std::string_view name);

// direct: every rank copies (or reduces) what it receives from the peers' buffers itself.
// gpu_leader: the first rank on each GPU does that for every rank on its GPU, in one process's
// launches: ranks sharing a GPU then run one stream of kernels instead of one per process (what
// small blocks pay for without MPS). With one rank per GPU both are the same.
enum class MovementAlgorithm { Direct, GpuLeader };
const char* movement_algorithm_name(MovementAlgorithm algorithm) noexcept;
// gpu_leader runs where every rank has an input and an output that all ranks know of: allgather,
// alltoall, reduce_scatter_block. Gather and scatter (where only the root's side may be in place)
// and reduce_scatter (where a rank may receive nothing) run direct; a table cannot choose otherwise.
bool gpu_leader_takes(Collective collective) noexcept;
std::optional<MovementAlgorithm> parse_movement_algorithm(std::string_view name);

struct MovementRule {
  std::vector<Collective> collectives; // empty: every one
  GpuCount gpus = GpuCount::Any;
  std::optional<bool> ranks_share_gpu;          // unset: either
  std::optional<std::uint64_t> max_block_bytes; // inclusive; unset: any size
  MovementAlgorithm algorithm = MovementAlgorithm::Direct;
  std::string why;
  OptionalMeasurement measured; // format 2: the measurement it came from

  bool operator==(const MovementRule&) const = default;
};

struct MovementShape {
  Collective collective = Collective::Allgather;
  int ranks = 2;
  int gpus = 2;
  std::uint64_t block_bytes = 0; // what one rank sends one peer (reduce_scatter: the mean block)
};

struct MovementChoice {
  MovementAlgorithm algorithm = MovementAlgorithm::Direct;
  std::string source; // runtime_ops.decision_source: table:NAME movement rule N, or fallback
};

// The first rule of `rules` that matches and whose algorithm runs the collective, else direct
// ("fallback").
MovementChoice choose_movement(const std::vector<MovementRule>& rules, std::string_view table_name,
                               const MovementShape& call);

} // namespace commlens::runtime::tuning
