#include "nccl_stream_work.hpp"

#include "commlens/profiler/summary_table.hpp"
#include "nccl_recording.hpp"

#include <algorithm>

namespace commlens::nccl {

namespace {
const contract::StreamWorkHooks& hooks() noexcept {
  return contract::collector_hooks().stream_work;
}
} // namespace

void begin_stream_work(pmpi::CallRecording& call, const void* stream) noexcept {
  if (hooks().begin != nullptr && call.profiler().collecting()) {
    hooks().begin(stream);
  }
}

void end_stream_work(pmpi::CallRecording& call, const void* stream) noexcept {
  if (hooks().end == nullptr) {
    return;
  }
  const EventRecord& event = call.event();
  const pmpi::CommunicatorEntry* communicator = call.communicator();
  contract::StreamCall work;
  work.call_id = call.profiler().collecting() ? event.call_id : 0;
  work.function = event.function;
  work.comm_id = communicator != nullptr ? communicator->id : -1;
  work.size_bin = static_cast<std::int16_t>(size_bin_of(std::max(event.bytes_sent, event.bytes_recv)));
  work.phase = call.profiler().phase();
  work.stream = stream;
  hooks().end(work, group_depth() > 0);
}

void end_stream_group() noexcept {
  if (hooks().group_ended != nullptr) {
    hooks().group_ended();
  }
}

} // namespace commlens::nccl
