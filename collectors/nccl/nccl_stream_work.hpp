#pragma once
// The GPU time of each NCCL call that queues work on a stream: the wrappers tell the CUDA collector
// (CollectorHooks::stream_work) before and after the call and at the end of the outermost group,
// and it brackets the call's work with CUDA events. Without the CUDA collector these do nothing.
#include "call_recording.hpp"

namespace commlens::nccl {

// Before the NCCL function.
void begin_stream_work(pmpi::CallRecording& call, const void* stream) noexcept;
// After call.record(): the call's bytes, communicator and phase are known.
void end_stream_work(pmpi::CallRecording& call, const void* stream) noexcept;
// After the outermost ncclGroupEnd: the group's calls queued their work now.
void end_stream_group() noexcept;

} // namespace commlens::nccl
