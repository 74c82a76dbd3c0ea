#include "selector.hpp"

#include "dynamic_candidates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace commlens::runtime::selection {

Selector::Selector(tuning::NamedTable table, SelectionSettings settings)
    : table_(std::move(table)), settings_(std::move(settings)),
      learners_(settings_.sweep ? tuning::LearnerRegistry(tuning::kSweepSettings)
                                : tuning::LearnerRegistry()) {}

Decision Selector::decide(const CallShape& call, const EngineFacts& engine) {
  if (std::optional<Decision> resident_decision = resident(call, engine)) {
    return std::move(*resident_decision);
  }
  switch (call.family) {
  case Family::Tree:
    return tree(call, engine);
  case Family::Movement:
    return movement(call, engine);
  case Family::Allreduce:
    break;
  }
  return allreduce(call, engine);
}

void Selector::without_host_path(Decision& decision) {
  if (decision.allreduce != tuning::AllreduceAlgorithm::OneShotStriped) {
    return;
  }
  decision.allreduce = tuning::AllreduceAlgorithm::OneShot;
  decision.streams = 1;
  decision.host_percent = 0;
  decision.source += " (host path unavailable: one_shot)";
}

// Ranks on one GPU only: without MPS their contexts take turns on the GPU and a resident kernel
// would wait out the others' time slices. `commlens tune` (sweep) and a forced algorithm measure
// the other algorithms, so neither gets it.
std::optional<Decision> Selector::resident(const CallShape& call, const EngineFacts& engine) const {
  const std::uint64_t contribution = call.resident_contribution;
  if (settings_.resident_bytes == 0 || contribution == 0 || contribution > settings_.resident_bytes ||
      settings_.sweep || settings_.allreduce.forced || engine.spans_nodes || engine.ranks < 2 ||
      engine.ranks > settings_.resident_max_ranks || engine.gpus != 1 || !engine.mps) {
    return std::nullopt;
  }
  const tuning::ResidentLimit limit = tuning::resident_limit(table_.table, call.collective, engine.ranks);
  if (call.bytes > limit.max_bytes) {
    return std::nullopt;
  }
  Decision decision{.route = Route::Resident, .resident = limit};
  decision.resident_cap = std::min(limit.max_bytes, settings_.resident_bytes);
  decision.source = fmt::format("{}: ranks sharing one GPU under MPS, a rank's contribution at most {} bytes",
                                tuning::resident_limit_source(table_.name, limit), decision.resident_cap);
  return decision;
}

Decision Selector::allreduce(const CallShape& call, const EngineFacts& engine) {
  Decision decision{.route = Route::Allreduce};
  // Across nodes the structure is fixed: node stages over IPC, the node leaders between nodes.
  if (engine.spans_nodes && !call.on_lane) {
    decision.allreduce = tuning::AllreduceAlgorithm::Hierarchical;
    decision.streams = 3;
    decision.source = "rule: communicator spans nodes";
    return decision;
  }
  // The table picks among the algorithms that are safe for the call; which are is code in
  // tuning/, not table. A learner picks among the same safe algorithms by agreed measurements.
  const tuning::CallShape shape{engine.ranks, engine.gpus, call.in_place, call.bytes};
  tuning::Choice choice = tuning::choose(table_.table, table_.name, shape, settings_.allreduce);
  if (settings_.dynamic && !call.on_lane && !settings_.allreduce.forced) {
    const std::vector<tuning::Choice> candidates = tuning::allreduce_candidates(shape, settings_.allreduce);
    std::string learned;
    decision.dynamic = turn(call, call.bytes, candidates.size(), &learned);
    if (decision.dynamic) {
      choice = candidates[decision.dynamic->turn.candidate];
      choice.source = std::move(learned);
    }
  }
  decision.source = std::move(choice.source);
  decision.allreduce = choice.algorithm;
  if (choice.algorithm == tuning::AllreduceAlgorithm::OneShotStriped) {
    if (call.on_lane) { // the striped algorithm shares the engine's host path with blocking calls
      decision.allreduce = tuning::AllreduceAlgorithm::OneShot;
      decision.source += " (nonblocking: one_shot)";
    } else {
      decision.streams = 3;
      decision.host_percent = choice.host_percent;
    }
  }
  // Ranks sharing GPUs run one-shot as one leader per GPU.
  decision.shared_gpu =
      decision.allreduce == tuning::AllreduceAlgorithm::OneShot && engine.gpus < engine.ranks;
  return decision;
}

Decision Selector::tree(const CallShape& call, const EngineFacts& engine) {
  const tuning::TreeCall shape{call.rooted, engine.ranks, engine.gpus, call.bytes, engine.mps};
  Decision decision{.route = Route::Tree, .tree = tuning::choose_tree(table_.table, table_.name, shape)};
  if (settings_.dynamic && !call.on_lane) {
    std::vector<tuning::TreeChoice> candidates =
        tuning::tree_candidates(table_.table, table_.name, shape,
                                settings_.sweep ? tuning::TreeBreadth::Sweep : tuning::TreeBreadth::Dynamic);
    std::string learned;
    decision.dynamic = turn(call, call.bytes, candidates.size(), &learned);
    if (decision.dynamic) {
      decision.tree = std::move(candidates[decision.dynamic->turn.candidate]);
      decision.tree.source = learned + " of " + decision.tree.source;
    }
  }
  decision.tree.streams = settings_.tree_streams.value_or(decision.tree.streams);
  decision.source = decision.tree.source;
  return decision;
}

Decision Selector::movement(const CallShape& call, const EngineFacts& engine) {
  const tuning::MovementShape shape{call.movement, engine.ranks, engine.gpus, call.block_bytes, engine.mps};
  tuning::MovementChoice choice = tuning::choose_movement(table_.table.data_movement, table_.name, shape);
  Decision decision{.route = Route::Movement};
  if (settings_.dynamic && !call.on_lane) {
    const std::vector<tuning::MovementAlgorithm> candidates = tuning::movement_candidates(shape);
    std::string learned;
    decision.dynamic = turn(call, call.block_bytes, candidates.size(), &learned);
    if (decision.dynamic) {
      choice = {candidates[decision.dynamic->turn.candidate], std::move(learned)};
    }
  }
  decision.movement = choice.algorithm;
  decision.source = std::move(choice.source);
  return decision;
}

// Communicator ids are agreed by the members and never reused, so a learner's history is the same
// on every rank of its communicator.
std::optional<DynamicTurn> Selector::turn(const CallShape& call, std::uint64_t bytes, std::size_t candidates,
                                          std::string* source) {
  if (!settings_.dynamic || call.on_lane || candidates < 2 || call.comm_id < 0) {
    return std::nullopt;
  }
  const tuning::LearnerKey key{static_cast<std::uint64_t>(call.comm_id), call.function, call.variant,
                               tuning::size_bucket(bytes)};
  tuning::BucketLearner& learner = learners_.learner(key, candidates);
  const tuning::LearnerTurn next = learner.next();
  *source = learner.describe(next);
  return DynamicTurn{&learner, next};
}

} // namespace commlens::runtime::selection
