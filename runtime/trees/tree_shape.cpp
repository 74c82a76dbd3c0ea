#include "trees/tree_shape.hpp"

namespace commlens::runtime::trees {

const char* shape_name(Shape shape) noexcept {
  switch (shape) {
  case Shape::Chain:
    return "chain";
  case Shape::Binary:
    return "binary";
  case Shape::Binomial:
    return "binomial";
  case Shape::Flat:
    break;
  }
  return "flat";
}

std::optional<Shape> parse_shape(std::string_view name) noexcept {
  for (const Shape shape : kShapes) {
    if (name == shape_name(shape)) {
      return shape;
    }
  }
  return std::nullopt;
}

} // namespace commlens::runtime::trees
