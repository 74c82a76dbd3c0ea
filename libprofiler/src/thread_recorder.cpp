#include "commlens/profiler/thread_recorder.hpp"

namespace commlens {

ThreadRecorder::ThreadRecorder(int rank, std::uint16_t thread_index, bool trace, std::size_t ring_capacity,
                               std::size_t summary_slots)
    : thread_index_(thread_index), trace_(trace),
      id_base_((static_cast<std::uint64_t>(rank) << (kThreadBits + kSequenceBits)) |
               (static_cast<std::uint64_t>(thread_index) << kSequenceBits)),
      // Summary mode stores no trace records: a minimal ring keeps memory per thread small.
      ring_(trace ? ring_capacity : 2), summary_(summary_slots) {}

} // namespace commlens
