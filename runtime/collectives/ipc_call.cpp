// The agreement for a call of IpcArguments (ipc_call.hpp).
#include "collectives/ipc_call.hpp"

namespace commlens::runtime::ipc {

bool agree_and_map(CommunicatorEngine& engine, IpcHandleCache& cache, const IpcArguments& args,
                   std::uint32_t inputs_needed, std::uint32_t outputs_needed, PeerBuffers& buffers,
                   IpcResult& result) {
  const BufferAgreement request{.input = args.sendbuf == MPI_IN_PLACE ? args.recvbuf : args.sendbuf,
                                .output = args.recvbuf,
                                .alignment = element_size(args.reduction.type),
                                .bytes = static_cast<std::uint64_t>(args.count) *
                                         element_size(args.reduction.type),
                                .inputs_needed = inputs_needed,
                                .outputs_needed = outputs_needed,
                                // No output is a reduce's inner rank without scratch memory: the allreduce
                                // and the trees always publish one, so all must decline.
                                .arguments_declined = args.non_contiguous || args.recvbuf == nullptr,
                                .background_opens = args.background_opens,
                                .vote = args.vote,
                                .ready_event = args.ready_event};
  return agree_and_map(engine, cache, request, buffers, &result.reason, &result.ipc_opens);
}

} // namespace commlens::runtime::ipc
