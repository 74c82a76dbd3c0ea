#include "dynamic_candidates.hpp"

#include "dynamic_learner.hpp"

#include <algorithm>
#include <span>

namespace commlens::runtime::tuning {

namespace {

constexpr std::uint64_t kDynamicSegments[] = {std::uint64_t{64} << 10, std::uint64_t{1} << 20};
// Tune sweeps the first three on a GPU's ranks. Ranks on different GPUs also try the larger two: a
// segment costs about 14 µs of host-side synchronisation whatever its size, so between GPUs 1 MiB
// segments cap a tree far below the peer link (77 GB/s against about 396 GB/s for one 256 MiB bcast
// on two H200s).
constexpr std::uint64_t kSweepSegments[] = {std::uint64_t{64} << 10, std::uint64_t{256} << 10,
                                            std::uint64_t{1} << 20, std::uint64_t{4} << 20,
                                            std::uint64_t{16} << 20};
constexpr std::size_t kSweepSegmentsOnOneGpu = 3;
constexpr std::uint32_t kSweepWindows[] = {2, 8};
constexpr std::uint32_t kSweepStreams[] = {1, 2, 4};
constexpr trees::Shape kTriedShapes[] = {trees::Shape::Flat, trees::Shape::Binomial, trees::Shape::Chain};

// Two settings the bucket's messages cannot tell apart: same shapes and pushing, and the same segments with
// the same number in flight on the same number of streams (a window wider than the message's
// segments is the same window; more streams than segments in flight, the same streams).
bool same_run(const TreeChoice& a, const TreeChoice& b, std::uint64_t bytes) {
  const auto in_flight = [&](const TreeChoice& choice) {
    const std::uint64_t segments = (bytes + choice.segment_bytes - 1) / choice.segment_bytes;
    return std::min<std::uint64_t>(choice.window, std::max<std::uint64_t>(segments, 1));
  };
  const auto streams = [&](const TreeChoice& choice) {
    return std::min<std::uint64_t>(std::max<std::uint32_t>(choice.streams, 1), in_flight(choice));
  };
  return a.shapes == b.shapes && a.push == b.push &&
         std::min(a.segment_bytes, bytes) == std::min(b.segment_bytes, bytes) &&
         in_flight(a) == in_flight(b) && streams(a) == streams(b);
}

} // namespace

std::uint64_t bucket_floor(std::uint64_t bytes) noexcept {
  return bytes == 0 ? 0 : std::uint64_t{1} << size_bucket(bytes);
}

std::vector<Choice> allreduce_candidates(const CallShape& call, const ChoiceSettings& settings) {
  const std::uint32_t share = settings.host_percent.value_or(0);
  std::vector<Choice> candidates;
  for (const AllreduceAlgorithm algorithm : kAlgorithms) {
    if (unsafe_reason(algorithm, call, share) == nullptr) {
      candidates.push_back({algorithm, algorithm == AllreduceAlgorithm::OneShotStriped ? share : 0, ""});
    }
  }
  return candidates;
}

std::vector<MovementAlgorithm> movement_candidates(const MovementShape& call) {
  std::vector<MovementAlgorithm> candidates{MovementAlgorithm::Direct};
  if (call.collective != Collective::Gather && call.gpus < call.ranks) {
    candidates.push_back(MovementAlgorithm::GpuLeader);
  }
  candidates.push_back(MovementAlgorithm::Staged);
  return candidates;
}

std::vector<TreeChoice> tree_candidates(const Table& table, std::string_view table_name, const TreeCall& call,
                                        TreeBreadth breadth) {
  TreeCall bucket = call;
  bucket.bytes = bucket_floor(call.bytes);
  std::vector<TreeChoice> candidates{choose_tree(table, table_name, bucket)};
  const TreeChoice base = candidates.front(); // a copy: the pushes below move the vector
  const bool sweep = breadth == TreeBreadth::Sweep;
  const auto segments = !sweep ? std::span<const std::uint64_t>(kDynamicSegments)
                        : call.gpus > 1
                            ? std::span<const std::uint64_t>(kSweepSegments)
                            : std::span<const std::uint64_t>(kSweepSegments).first(kSweepSegmentsOnOneGpu);
  const auto windows =
      sweep ? std::span<const std::uint32_t>(kSweepWindows) : std::span<const std::uint32_t>(&base.window, 1);
  const auto streams = sweep ? std::span<const std::uint32_t>(kSweepStreams)
                             : std::span<const std::uint32_t>(&base.streams, 1);
  // Ranks sharing a GPU: a bcast also tries the flat tree's root writing every child's buffer (one
  // context copying instead of one per child; deeper trees would still have most ranks copy).
  const bool pushes = call.collective == RootedCollective::Bcast && call.gpus < call.ranks;
  const auto add = [&](const TreeChoice& variant) {
    if (std::ranges::none_of(
            candidates, [&](const TreeChoice& listed) { return same_run(listed, variant, bucket.bytes); })) {
      candidates.push_back(variant);
    }
  };
  for (const trees::Shape shape : kTriedShapes) {
    for (const std::uint64_t segment : segments) {
      for (const std::uint32_t window : windows) {
        for (const std::uint32_t stream_count : streams) {
          TreeChoice variant{base.shapes, segment, window, stream_count, base.source};
          (call.gpus == 1 ? variant.shapes.gpu : variant.shapes.node) = shape;
          add(variant);
          if (pushes && shape == trees::Shape::Flat) {
            variant.push = true;
            add(variant);
          }
        }
      }
    }
  }
  return candidates;
}

} // namespace commlens::runtime::tuning
