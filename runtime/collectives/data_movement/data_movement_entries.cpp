// The data-movement entries (entry::MPI_Allgather ...): each says what its call is, as a
// MovementCall, and how MPI runs it on staged buffers; data_movement_call.cpp does the rest.
#include "collectives/data_movement/data_movement_call.hpp"
#include "datatypes/message_layout.hpp"
#include "device/mpi_reduction_map.hpp"
#include "function_ids.hpp"
#include "runtime_entry_points.hpp"

#include <numeric>
#include <span>

namespace commlens::runtime {

namespace {

using tuning::Collective;

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

bool is_inter(MPI_Comm comm) {
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  return inter != 0;
}

} // namespace

int movement_group_size(MPI_Comm comm) {
  int size = 0;
  if (is_inter(comm)) {
    PMPI_Comm_remote_size(comm, &size);
  } else {
    PMPI_Comm_size(comm, &size);
  }
  return size;
}

namespace {

// Whether this rank is the root of a rooted call (an inter-communicator's root passes MPI_ROOT).
bool is_root_of(MPI_Comm comm, int root) {
  return is_inter(comm) ? root == MPI_ROOT : comm_rank(comm) == root;
}

// The runtime copies whole blocks of bytes: both sides' messages contiguous and equally long.
bool blocks_match(int send_count, MPI_Datatype send_type, int recv_count, MPI_Datatype recv_type) {
  return contiguous_message(send_count, send_type) && contiguous_message(recv_count, recv_type) &&
         message_bytes(send_count, send_type) == message_bytes(recv_count, recv_type);
}

MovementCall copy_call(FunctionId function, Collective collective, MPI_Comm comm, std::uint64_t block) {
  MovementCall call;
  call.function = function;
  call.comm = comm;
  call.geometry.collective = collective;
  call.geometry.block_bytes = block;
  call.bytes = block;
  call.unsupported = block == 0 ? "empty call" : nullptr;
  return call;
}

// reduce_scatter(_block): the pair's kernel, or why there is none.
void set_reduction(MovementCall& call, MPI_Datatype datatype, MPI_Op op) {
  const char* why = nullptr;
  call.reduction = reduction_for(datatype, op, &why);
  if (call.reduction) {
    call.geometry.element_bytes = element_size(call.reduction->type);
  } else if (call.unsupported == nullptr) {
    call.unsupported = why;
  }
}

} // namespace

MovementCall allgather_call(FunctionId function, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const std::uint64_t block = message_bytes(recvcount, recvtype);
  MovementCall call = copy_call(function, Collective::Allgather, comm, block);
  call.geometry.in_place = in_place;
  call.input = in_place
                   ? static_cast<const char*>(recvbuf) + block * static_cast<std::uint64_t>(comm_rank(comm))
                   : sendbuf;
  call.output = recvbuf;
  call.arguments_declined = in_place ? !contiguous_message(recvcount, recvtype)
                                     : !blocks_match(sendcount, sendtype, recvcount, recvtype);
  return call;
}

MovementCall reduce_scatter_block_call(FunctionId function, const void* sendbuf, void* recvbuf, int recvcount,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  MovementCall call =
      copy_call(function, Collective::ReduceScatterBlock, comm, message_bytes(recvcount, datatype));
  if (sendbuf == MPI_IN_PLACE && call.unsupported == nullptr) {
    // A rank's result would overwrite the first block of its input while rank 0 still reads it.
    call.unsupported = "MPI_IN_PLACE reduce_scatter (not implemented)";
  }
  set_reduction(call, datatype, op);
  call.input = sendbuf;
  call.output = recvbuf;
  return call;
}

MovementCall reduce_scatter_call(FunctionId function, const void* sendbuf, void* recvbuf,
                                 const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const int ranks = movement_group_size(comm);
  const int me = is_inter(comm) ? 0 : comm_rank(comm); // an inter-communicator goes to the baseline
  const std::span<const int> counts(recvcounts, static_cast<std::size_t>(ranks));
  int total = 0;
  for (const int count : counts) {
    total += count;
  }
  // The signature every rank shares: the mean block (block_plan.hpp slices by the counts).
  MovementCall call = copy_call(function, Collective::ReduceScatter, comm,
                                message_bytes(total, datatype) / static_cast<std::uint64_t>(ranks));
  call.bytes = message_bytes(total, datatype);
  call.unsupported = total > 0 ? nullptr : "empty call";
  if (sendbuf == MPI_IN_PLACE && call.unsupported == nullptr) {
    call.unsupported = "MPI_IN_PLACE reduce_scatter (not implemented)";
  }
  set_reduction(call, datatype, op);
  call.geometry.counts = counts;
  call.input = sendbuf;
  call.output = counts[static_cast<std::size_t>(me)] > 0 ? recvbuf : nullptr;
  return call;
}

int entry::MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, std::uint64_t call_id,
                         std::uint8_t* implementation) noexcept {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  MovementCall call = allgather_call(pmpi::fn::MPI_Allgather, sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, comm);
  return run_movement_call(call, call_id, implementation, [&](StagedBuffers& staged) {
    const void* send = staged.send(sendbuf, sendcount, sendtype);
    void* receive = staged.receive(recvbuf, recvcount, recvtype, movement_group_size(comm), in_place);
    return staged.finish(staged.ok()
                             ? PMPI_Allgather(send, sendcount, sendtype, receive, recvcount, recvtype, comm)
                             : MPI_SUCCESS);
  });
}

int entry::MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, std::uint64_t call_id,
                      std::uint8_t* implementation) noexcept {
  const bool is_root = is_root_of(comm, root);
  const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
  const std::uint64_t block =
      is_root ? message_bytes(recvcount, recvtype) : message_bytes(sendcount, sendtype);
  MovementCall call = copy_call(pmpi::fn::MPI_Gather, Collective::Gather, comm, block);
  call.geometry.root = root;
  call.geometry.in_place = in_place;
  call.input = in_place ? nullptr : sendbuf;
  call.output = is_root ? recvbuf : nullptr;
  call.arguments_declined = !is_root   ? !contiguous_message(sendcount, sendtype)
                            : in_place ? !contiguous_message(recvcount, recvtype)
                                       : !blocks_match(sendcount, sendtype, recvcount, recvtype);
  return run_movement_call(call, call_id, implementation, [&](StagedBuffers& staged) {
    const void* send = staged.send(sendbuf, sendcount, sendtype);
    void* receive =
        is_root ? staged.receive(recvbuf, recvcount, recvtype, movement_group_size(comm), in_place) : recvbuf;
    return staged.finish(
        staged.ok() ? PMPI_Gather(send, sendcount, sendtype, receive, recvcount, recvtype, root, comm)
                    : MPI_SUCCESS);
  });
}

int entry::MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, std::uint64_t call_id,
                       std::uint8_t* implementation) noexcept {
  const bool is_root = is_root_of(comm, root);
  const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
  const std::uint64_t block =
      is_root ? message_bytes(sendcount, sendtype) : message_bytes(recvcount, recvtype);
  MovementCall call = copy_call(pmpi::fn::MPI_Scatter, Collective::Scatter, comm, block);
  call.geometry.root = root;
  call.geometry.in_place = in_place;
  call.input = is_root ? sendbuf : nullptr;
  call.output = in_place ? nullptr : recvbuf;
  call.arguments_declined = !is_root   ? !contiguous_message(recvcount, recvtype)
                            : in_place ? !contiguous_message(sendcount, sendtype)
                                       : !blocks_match(sendcount, sendtype, recvcount, recvtype);
  return run_movement_call(call, call_id, implementation, [&](StagedBuffers& staged) {
    const void* send =
        is_root ? staged.send(sendbuf, sendcount, sendtype, movement_group_size(comm)) : sendbuf;
    void* receive = staged.receive(recvbuf, recvcount, recvtype, 1, false);
    return staged.finish(
        staged.ok() ? PMPI_Scatter(send, sendcount, sendtype, receive, recvcount, recvtype, root, comm)
                    : MPI_SUCCESS);
  });
}

int entry::MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, std::uint64_t call_id,
                        std::uint8_t* implementation) noexcept {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  MovementCall call =
      copy_call(pmpi::fn::MPI_Alltoall, Collective::Alltoall, comm, message_bytes(recvcount, recvtype));
  if (in_place && call.unsupported == nullptr) {
    // Peers would read blocks of this rank's buffer while it overwrites them.
    call.unsupported = "MPI_IN_PLACE alltoall (not implemented)";
  }
  call.input = sendbuf;
  call.output = recvbuf;
  call.arguments_declined = !in_place && !blocks_match(sendcount, sendtype, recvcount, recvtype);
  return run_movement_call(call, call_id, implementation, [&](StagedBuffers& staged) {
    const int ranks = movement_group_size(comm);
    const void* send = staged.send(sendbuf, sendcount, sendtype, ranks);
    void* receive = staged.receive(recvbuf, recvcount, recvtype, ranks, in_place);
    return staged.finish(staged.ok()
                             ? PMPI_Alltoall(send, sendcount, sendtype, receive, recvcount, recvtype, comm)
                             : MPI_SUCCESS);
  });
}

int entry::MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm, std::uint64_t call_id,
                                    std::uint8_t* implementation) noexcept {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  MovementCall call = reduce_scatter_block_call(pmpi::fn::MPI_Reduce_scatter_block, sendbuf, recvbuf,
                                                recvcount, datatype, op, comm);
  return run_movement_call(call, call_id, implementation, [&](StagedBuffers& staged) {
    const void* send = staged.send(sendbuf, recvcount, datatype, movement_group_size(comm));
    void* receive =
        staged.receive(recvbuf, recvcount, datatype, in_place ? movement_group_size(comm) : 1, in_place);
    return staged.finish(staged.ok() ? PMPI_Reduce_scatter_block(send, receive, recvcount, datatype, op, comm)
                                     : MPI_SUCCESS);
  });
}

int entry::MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, std::uint64_t call_id,
                              std::uint8_t* implementation) noexcept {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const int me = is_inter(comm) ? 0 : comm_rank(comm);
  const std::span<const int> counts(recvcounts, static_cast<std::size_t>(movement_group_size(comm)));
  const int total = std::accumulate(counts.begin(), counts.end(), 0);
  MovementCall call =
      reduce_scatter_call(pmpi::fn::MPI_Reduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op, comm);
  return run_movement_call(call, call_id, implementation, [&](StagedBuffers& staged) {
    const void* send = staged.send(sendbuf, total, datatype);
    void* receive = staged.receive(recvbuf, in_place ? total : counts[static_cast<std::size_t>(me)], datatype,
                                   1, in_place);
    return staged.finish(staged.ok() ? PMPI_Reduce_scatter(send, receive, recvcounts, datatype, op, comm)
                                     : MPI_SUCCESS);
  });
}

} // namespace commlens::runtime
