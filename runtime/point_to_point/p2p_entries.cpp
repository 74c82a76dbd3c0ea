// The point-to-point entries (runtime_entry_points.hpp): each hands its call to the process's
// PointToPoint (runtime_state().p2p) with its function's id, which names the runtime_ops row.
#include "collectives/runtime_state.hpp"
#include "function_ids.hpp"
#include "point_to_point/point_to_point.hpp"
#include "runtime_entry_points.hpp"

namespace commlens::runtime {

namespace {

PointToPoint& p2p() {
  return *runtime_state().p2p;
}

int send_in_mode(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 MPI_Request* request, std::uint64_t call_id, FunctionId function,
                 std::uint8_t* implementation, SendMode mode) {
  return p2p().send(buf, count, datatype, dest, tag, {call_id, function, comm}, request, implementation,
                    mode);
}

int send_init_in_mode(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, std::uint64_t call_id, FunctionId function,
                      std::uint8_t* implementation, SendMode mode) {
  return p2p().send_init(buf, count, datatype, dest, tag, {call_id, function, comm}, request, implementation,
                         mode);
}

} // namespace

int entry::MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, nullptr, call_id, pmpi::fn::MPI_Send,
                      implementation, SendMode::Standard);
}

int entry::MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, nullptr, call_id, pmpi::fn::MPI_Ssend,
                      implementation, SendMode::Synchronous);
}

int entry::MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, nullptr, call_id, pmpi::fn::MPI_Rsend,
                      implementation, SendMode::Ready);
}

int entry::MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, nullptr, call_id, pmpi::fn::MPI_Bsend,
                      implementation, SendMode::Buffered);
}

int entry::MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Isend,
                      implementation, SendMode::Standard);
}

int entry::MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Issend,
                      implementation, SendMode::Synchronous);
}

int entry::MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Irsend,
                      implementation, SendMode::Ready);
}

int entry::MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Ibsend,
                      implementation, SendMode::Buffered);
}

int entry::MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                         MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return send_init_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Send_init,
                           implementation, SendMode::Standard);
}

int entry::MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request, std::uint64_t call_id,
                          std::uint8_t* implementation) noexcept {
  return send_init_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Ssend_init,
                           implementation, SendMode::Synchronous);
}

int entry::MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request, std::uint64_t call_id,
                          std::uint8_t* implementation) noexcept {
  return send_init_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Rsend_init,
                           implementation, SendMode::Ready);
}

int entry::MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          MPI_Request* request, std::uint64_t call_id,
                          std::uint8_t* implementation) noexcept {
  return send_init_in_mode(buf, count, datatype, dest, tag, comm, request, call_id, pmpi::fn::MPI_Bsend_init,
                           implementation, SendMode::Buffered);
}

int entry::MPI_Start(MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return p2p().start(false, 1, request, {call_id, pmpi::fn::MPI_Start, MPI_COMM_NULL}, implementation);
}

int entry::MPI_Startall(int count, MPI_Request requests[], std::uint64_t call_id,
                        std::uint8_t* implementation) noexcept {
  return p2p().start(true, count, requests, {call_id, pmpi::fn::MPI_Startall, MPI_COMM_NULL}, implementation);
}

int entry::MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Status* status, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return p2p().recv(buf, count, datatype, source, tag, {call_id, pmpi::fn::MPI_Recv, comm}, status,
                    implementation);
}

int entry::MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                     MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return p2p().irecv(buf, count, datatype, source, tag, {call_id, pmpi::fn::MPI_Irecv, comm}, request,
                     implementation);
}

int entry::MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                        MPI_Comm comm, MPI_Status* status, std::uint64_t call_id,
                        std::uint8_t* implementation) noexcept {
  return p2p().sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                        recvtag, {call_id, pmpi::fn::MPI_Sendrecv, comm}, status, implementation);
}

int entry::MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                                int source, int recvtag, MPI_Comm comm, MPI_Status* status,
                                std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return p2p().sendrecv(nullptr, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag,
                        {call_id, pmpi::fn::MPI_Sendrecv_replace, comm}, status, implementation);
}

int entry::MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                         MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return p2p().recv_init(buf, count, datatype, source, tag, {call_id, pmpi::fn::MPI_Recv_init, comm}, request,
                         implementation);
}

// Probes make no runtime_ops row: they move no data.
int entry::MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status, std::uint64_t /*call_id*/,
                     std::uint8_t* /*implementation*/) noexcept {
  return p2p().probe(source, tag, comm, nullptr, status);
}

int entry::MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status,
                      std::uint64_t /*call_id*/, std::uint8_t* /*implementation*/) noexcept {
  return p2p().probe(source, tag, comm, flag, status);
}

int entry::MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status,
                      std::uint64_t /*call_id*/, std::uint8_t* /*implementation*/) noexcept {
  return p2p().mprobe(source, tag, comm, nullptr, message, status);
}

int entry::MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                       MPI_Status* status, std::uint64_t /*call_id*/,
                       std::uint8_t* /*implementation*/) noexcept {
  return p2p().mprobe(source, tag, comm, flag, message, status);
}

int entry::MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status,
                     std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return p2p().mrecv(buf, count, datatype, message, {call_id, pmpi::fn::MPI_Mrecv, MPI_COMM_NULL}, status,
                     implementation);
}

int entry::MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request,
                      std::uint64_t call_id, std::uint8_t* implementation) noexcept {
  return p2p().imrecv(buf, count, datatype, message, {call_id, pmpi::fn::MPI_Imrecv, MPI_COMM_NULL}, request,
                      implementation);
}

} // namespace commlens::runtime
