#pragma once
// The runtime's one selection model: from a call's shape (arguments equal on every rank) and its
// engine's agreed facts, which implementation runs the call, with its parameters and what chose
// them (runtime_ops.decision_source). It absorbs every rule of choice the runtime has: the resident
// kernel's admission, the hierarchical algorithm for communicators spanning nodes, a forced
// algorithm, the tuning table's rules (tuning/), and Dynamic selection's learners. Because every
// input is equal on every rank, every rank decides alike without talking to the others.
// Pure C++ (no CUDA, no MPI), so CPU tests check the decisions directly.
#include "dynamic_learner.hpp"
#include "resident_rules.hpp"
#include "shipped_tables.hpp"
#include "tree_rules.hpp"
#include "tuning_table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace commlens::runtime::selection {

// Which algorithms a call chooses among.
enum class Family : std::uint8_t { Allreduce, Tree, Movement };

struct CallShape {
  Family family = Family::Allreduce;
  std::string_view collective{};     // its name in the table's resident rules: allreduce, bcast, ...
  tuning::RootedCollective rooted{}; // Tree: bcast or reduce
  tuning::Collective movement{};     // Movement: which data-movement collective
  std::uint64_t bytes = 0;           // runtime_ops.bytes (Movement: the whole call's)
  std::uint64_t block_bytes = 0;     // Movement: what one rank sends one peer
  // The largest contribution of any rank, for the resident kernel; 0: the kernel is not asked (a
  // nonblocking call, or one whose kernel could not start).
  std::uint64_t resident_contribution = 0;
  bool in_place = false;
  bool on_lane = false; // a nonblocking call run on its lane: no learner, no host path
  // Dynamic selection's learner for the call: the communicator's agreed id (-1: none, no learner),
  // the function and a variant telling apart calls of one function with other candidate lists.
  std::int64_t comm_id = -1;
  std::uint32_t function = 0;
  std::uint32_t variant = 0;
};

// What the engine agreed on for the communicator, equal on every rank.
struct EngineFacts {
  int ranks = 2;
  int gpus = 2; // distinct GPUs of the communicator's ranks
  bool spans_nodes = false;
  bool mps = false; // every rank's process runs under CUDA MPS
};

// The run's settings that take part in the choice.
struct SelectionSettings {
  tuning::ChoiceSettings allreduce{};          // COMMLENS_RUNTIME_ALGORITHM, COMMLENS_RUNTIME_HOST_PERCENT
  std::uint64_t resident_bytes = 0;            // COMMLENS_RUNTIME_RESIDENT_BYTES (0: no resident kernel)
  bool dynamic = false;                        // COMMLENS_RUNTIME_SELECT=dynamic or sweep
  bool sweep = false;                          // COMMLENS_RUNTIME_SELECT=sweep: every candidate in turn
  std::optional<std::uint32_t> tree_streams{}; // COMMLENS_RUNTIME_TREE_STREAMS (unset: the table's)
  int resident_max_ranks = 0;                  // the most ranks the resident kernel serves
};

// A call whose candidate a learner picked: after the run, learn_from_call tells the learner its time.
struct DynamicTurn {
  tuning::BucketLearner* learner = nullptr;
  tuning::LearnerTurn turn{};
};

enum class Route : std::uint8_t { Resident, Allreduce, Tree, Movement };

struct Decision {
  Route route = Route::Allreduce;
  std::string source{}; // runtime_ops.decision_source
  // Resident: the limit that admitted the call (the table's rule, capped by the setting).
  tuning::ResidentLimit resident{};
  std::uint64_t resident_cap = 0; // min(limit, COMMLENS_RUNTIME_RESIDENT_BYTES)
  // Allreduce: the algorithm, how many streams it uses, the share of the host path (striped).
  tuning::AllreduceAlgorithm allreduce = tuning::AllreduceAlgorithm::OneShot;
  std::uint32_t host_percent = 0;
  std::uint32_t streams = 1;
  bool shared_gpu = false; // ranks share GPUs: one-shot runs as one leader per GPU
  // Tree: shapes, segment, window, streams (the setting's, else the table's), push.
  tuning::TreeChoice tree{};
  // Movement: direct, gpu_leader, or staged (the baseline, chosen alike on every rank).
  tuning::MovementAlgorithm movement = tuning::MovementAlgorithm::Direct;
  std::optional<DynamicTurn> dynamic{}; // set: a learner's turn chose it
};

class Selector {
public:
  Selector() = default;
  Selector(tuning::NamedTable table, SelectionSettings settings);

  // The decision for one call. Only a call a learner takes part in changes the Selector (the
  // learner counts its turns), so call it once per call.
  Decision decide(const CallShape& call, const EngineFacts& engine);

  // The allreduce's striped algorithm where the engine has no host path: one-shot, saying why.
  static void without_host_path(Decision& decision);

  const tuning::NamedTable& table() const noexcept { return table_; }
  const SelectionSettings& settings() const noexcept { return settings_; }

private:
  std::optional<Decision> resident(const CallShape& call, const EngineFacts& engine) const;
  Decision allreduce(const CallShape& call, const EngineFacts& engine);
  Decision tree(const CallShape& call, const EngineFacts& engine);
  Decision movement(const CallShape& call, const EngineFacts& engine);
  // A learner's turn among `candidates`, or none (static selection, a lane, no communicator id,
  // or fewer than two candidates), with what the learner did in *source.
  std::optional<DynamicTurn> turn(const CallShape& call, std::uint64_t bytes, std::size_t candidates,
                                  std::string* source);

  tuning::NamedTable table_;
  SelectionSettings settings_;
  tuning::LearnerRegistry learners_; // per communicator, function, variant and size bucket
};

} // namespace commlens::runtime::selection
