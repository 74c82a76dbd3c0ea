// The process's one RuntimeState (collectives/runtime_state.hpp). Made here, at the top of the
// layers, because its point-to-point and nonblocking runtimes are only declared below.
#include "collectives/runtime_state.hpp"
#include "nonblocking/nonblocking_collectives.hpp"
#include "point_to_point/point_to_point.hpp"

namespace commlens::runtime {

RuntimeState::RuntimeState() = default;
RuntimeState::~RuntimeState() = default;

RuntimeState& runtime_state() {
  static RuntimeState state;
  return state;
}

} // namespace commlens::runtime
