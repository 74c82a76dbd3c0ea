#include "collectives/resident_call.hpp"

#include "transport/buffer_decline.hpp"
#include "transport/call_phases.hpp"
#include "transport/device_buffer.hpp"

#include <fmt/format.h>

namespace commlens::runtime {

namespace {

// This rank's reason not to run the call, after waiting for its buffers' producers (counted as
// the call's publish phase, as the IPC agreement's buffer checks are). The buffers must be on the
// GPU the channel's kernel runs on (the program may have switched devices since it opened).
Decline local_decline(const ResidentRequest& request, int channel_device) {
  if (request.arguments_declined) {
    return Decline::Arguments;
  }
  int device = channel_device;
  if (request.plan.contribution_bytes > 0) {
    if (const Decline decline = device_buffer_decline(request.plan.contribution, 1, &device);
        decline != Decline::None) {
      return decline;
    }
  }
  if (request.output != nullptr) {
    if (const Decline decline = device_buffer_decline(request.output, request.output_alignment, &device);
        decline != Decline::None) {
      return decline;
    }
  }
  // The producers may still run on the legacy default stream (or streams synchronising with it).
  return wait_for_legacy_stream() ? Decline::None : Decline::StreamError;
}

// The run's sums, for report_resident_calls. A call that launched the kernel (its first, or after
// it lingered out) is counted apart: its launch, and on the first a module load, would swamp the
// means of the calls the kernel serves while it stays.
void add_to_sums(RuntimeState::ResidentSums& sums, const resident::Outcome& outcome,
                 std::uint64_t checks_ns) {
  sums.launches += outcome.launched ? 1 : 0;
  if (outcome.launched || outcome.cuda_error != 0) {
    return;
  }
  const resident::KernelTimes& times = outcome.times;
  ++sums.calls;
  sums.checks_ns += checks_ns;
  sums.host_wait_ns += outcome.host_wait_ns;
  sums.kernel_ns += times.done - times.taken;
  sums.contribute_ns += times.flagged - times.taken;
  sums.peer_wait_ns += times.arrived - times.flagged;
  sums.steps_ns += times.done - times.arrived;
}

} // namespace

ResidentRun run_chosen_resident(RuntimeState& state, CommunicatorEngine& engine, MPI_Comm comm,
                                const selection::Decision& decision, const ResidentRequest& request,
                                RuntimeOp& record, int* rc) {
  std::string problem;
  resident::Channel* channel = engine.resident_channel(comm, state.selection.settings().resident_bytes,
                                                       state.resident_linger_ns, &problem);
  if (!problem.empty()) {
    state.host.set_run_value("runtime_resident_problem", problem);
  }
  if (channel == nullptr) {
    return ResidentRun::NotTaken;
  }
  const std::uint64_t publish_before = this_thread_phases.publish_ns;
  Decline decline = Decline::None;
  {
    const PhaseTimer publishing(this_thread_phases.publish_ns);
    decline = local_decline(request, channel->device());
  }
  const resident::Outcome outcome =
      channel->run(request.plan, static_cast<std::uint32_t>(decline), request.reduction);
  // The kernel's wait for the other ranks' flags is the call's agreement.
  this_thread_phases.agree_ns += outcome.times.arrived - outcome.times.flagged;
  add_to_sums(state.resident_sums, outcome, this_thread_phases.publish_ns - publish_before);
  record.decision_source = decision.source;
  if (outcome.declined_rank >= 0) {
    record.decision = "fallback";
    record.reason = fmt::format("rank {}: {}", outcome.declined_rank,
                                decline_text(static_cast<Decline>(outcome.decline)));
    return ResidentRun::Declined;
  }
  record.decision = "runtime";
  record.implementation = Implementation::Resident;
  record.algorithm = "resident";
  record.streams = 1;
  record.bytes_peer = request.plan.peer_bytes;
  if (outcome.cuda_error != 0) {
    record.reason = fmt::format("CUDA error {} in the resident kernel", outcome.cuda_error);
  }
  *rc = outcome.cuda_error == 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
  return ResidentRun::Ran;
}

void report_resident_calls(RuntimeState& state) {
  const RuntimeState::ResidentSums& sums = state.resident_sums;
  if (sums.calls + sums.launches == 0) {
    return;
  }
  const auto mean_us = [&](std::uint64_t total) {
    return sums.calls == 0 ? 0.0 : static_cast<double>(total) / 1e3 / static_cast<double>(sums.calls);
  };
  state.host.set_run_value(
      fmt::format("runtime_resident.rank{}", state.host.world_rank),
      fmt::format(
          "{} calls and {} that launched the kernel; mean us over the calls: checks {:.2f}, posted to "
          "done {:.2f} (kernel {:.2f}: call, contribution and flag {:.2f}, other ranks {:.2f}, steps {:.2f})",
          sums.calls, sums.launches, mean_us(sums.checks_ns), mean_us(sums.host_wait_ns),
          mean_us(sums.kernel_ns), mean_us(sums.contribute_ns), mean_us(sums.peer_wait_ns),
          mean_us(sums.steps_ns)));
}

} // namespace commlens::runtime
