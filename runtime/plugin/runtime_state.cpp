#include "plugin/runtime_state.hpp"

namespace commlens::runtime {

RuntimeState& runtime_state() {
  static RuntimeState state;
  return state;
}

} // namespace commlens::runtime
