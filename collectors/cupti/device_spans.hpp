#pragma once
// The GPU time of every NCCL call, without kernel records: a CUDA event recorded on the call's
// stream before it and one after it (after the group's end inside ncclGroupStart/End) bracket the
// work the call queued there. When the second event has completed, the span goes to
// `device_spans` (trace mode, one row per call) and to `device_span_stats` (both modes, per
// function, communicator, size bin and phase). Times come from cuEventElapsedTime against an
// anchor event whose profiler time is known to a few microseconds, re-taken every 10 s.
//
// Two event records a call cost about 2 µs of host time (docs/performance.md), against 2 to 8 µs a
// kernel for CUPTI's kernel records, which also tie every kernel to its call but are recorded only
// in chosen steps (kernel_schedule.hpp). Calls on a stream being captured into a CUDA graph are
// not timed (an event recorded there would be a graph node, not a time). The driver API is used
// throughout, so the runtime's last-error state, which frameworks check after launches, is never
// touched.
#include "collector_hooks.hpp"

#include <cstdint>
#include <functional>

namespace commlens::cuda {

// A completed span: the stream's id (stream column), its GPU start and end on the profiler's clock.
// Called under the collector's lock on whatever thread noticed the completion.
using SpanDone = std::function<void(std::uint32_t stream_id, std::int64_t start_ns, std::int64_t end_ns)>;

// The hooks the NCCL wrappers call (CollectorHooks::stream_work).
contract::StreamWorkHooks device_span_hooks() noexcept;
// Streams are named by CUPTI's ids (the default: kernel records name them so) or, where CUPTI is
// not attached, by the driver's (cuStreamGetId). Set before the first span.
void take_stream_ids_from_cupti(bool from_cupti) noexcept;
// Other work timed as the NCCL calls are (runtime_copies.hpp: copies): begin before it is queued on
// its stream, end after, on the same thread; done runs once the work has completed (empty: the
// work is not timed, as when the call failed).
void begin_stream_span(const void* stream) noexcept;
void end_stream_span(const void* stream, SpanDone done) noexcept;
// The call whose span, on the stream CUPTI names cupti_stream, holds a kernel that ran from
// start_ns to end_ns (profiler clock); 0 for none in the last minute. For NCCL's kernels whose
// activity records came without their call: CUPTI attached to a running process (a job without
// MPI, where the first NCCL call starts the profiler) links kernels to the external correlation
// ids pushed around the calls only for some of them.
std::uint64_t kernel_call(std::uint32_t cupti_stream, std::int64_t start_ns, std::int64_t end_ns);
// MPI_Finalize or exit: waits for the calls still pending and stores every row.
void finish_device_spans();

} // namespace commlens::cuda
