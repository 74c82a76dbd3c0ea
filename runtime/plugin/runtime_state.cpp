#include "plugin/runtime_state.hpp"

namespace commlens::runtime {

RuntimeState& runtime_state() {
  static RuntimeState state;
  return state;
}

void drain_nonblocking(MPI_Comm comm) {
  if (const auto& nonblocking = runtime_state().nonblocking) {
    nonblocking->drain(comm);
  }
}

} // namespace commlens::runtime
