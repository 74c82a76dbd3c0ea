#pragma once
// The shapes a level of a collective tree can take. Pure C++ (the tuning table names them too).
#include <optional>
#include <string_view>

namespace commlens::runtime::trees {

// Flat: every member is a child of the level's root (one hop, the root serves everyone). Chain:
// each member is the child of the one before (a pipeline: best bandwidth for many segments).
// Binary: member i is the child of (i - 1) / 2. Binomial: member i is the child of i with its
// highest bit cleared (log2 depth, the root serving the largest subtrees first).
enum class Shape { Flat, Chain, Binary, Binomial };
inline constexpr Shape kShapes[] = {Shape::Flat, Shape::Chain, Shape::Binary, Shape::Binomial};

const char* shape_name(Shape shape) noexcept; // flat, chain, binary, binomial
std::optional<Shape> parse_shape(std::string_view name) noexcept;

// A tree's shape on each level of the hardware: among the ranks of one GPU, among the GPUs of one
// node (their leaders), among the nodes (their leaders).
struct LevelShapes {
  Shape gpu = Shape::Flat;
  Shape node = Shape::Binomial;
  Shape nodes = Shape::Binomial;

  bool operator==(const LevelShapes&) const = default;
};

} // namespace commlens::runtime::trees
