#include "p2p_entries.hpp"

#include "allreduce_entry.hpp"

namespace commlens::runtime {

namespace {

PointToPoint& p2p() {
  return *runtime_state().p2p;
}

const PointToPointFunctions& functions() {
  return runtime_state().p2p_functions;
}

int send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
         std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().send(buf, count, datatype, dest, tag, {call_id, functions().send, comm}, nullptr,
                    implementation);
}

int isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
          MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().send(buf, count, datatype, dest, tag, {call_id, functions().isend, comm}, request,
                    implementation);
}

// The other send modes, one entry each: Function names the row, Mode the PMPI call.
template <FunctionId PointToPointFunctions::*Function, SendMode Mode>
int blocking_send_in_mode(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                          std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().send(buf, count, datatype, dest, tag, {call_id, functions().*Function, comm}, nullptr,
                    implementation, Mode);
}

template <FunctionId PointToPointFunctions::*Function, SendMode Mode>
int nonblocking_send_in_mode(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                             MPI_Comm comm, MPI_Request* request, std::uint64_t call_id,
                             std::uint8_t* implementation) {
  return p2p().send(buf, count, datatype, dest, tag, {call_id, functions().*Function, comm}, request,
                    implementation, Mode);
}

template <FunctionId PointToPointFunctions::*Function, SendMode Mode>
int send_init_in_mode(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().send_init(buf, count, datatype, dest, tag, {call_id, functions().*Function, comm}, request,
                         implementation, Mode);
}

int start(MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().start(false, 1, request, {call_id, functions().start, MPI_COMM_NULL}, implementation);
}

int startall(int count, MPI_Request requests[], std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().start(true, count, requests, {call_id, functions().startall, MPI_COMM_NULL}, implementation);
}

int recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status,
         std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().recv(buf, count, datatype, source, tag, {call_id, functions().recv, comm}, status,
                    implementation);
}

int irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
          MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().irecv(buf, count, datatype, source, tag, {call_id, functions().irecv, comm}, request,
                     implementation);
}

int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status,
             std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                        recvtag, {call_id, functions().sendrecv, comm}, status, implementation);
}

int sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                     int recvtag, MPI_Comm comm, MPI_Status* status, std::uint64_t call_id,
                     std::uint8_t* implementation) {
  return p2p().sendrecv(nullptr, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag,
                        {call_id, functions().sendrecv_replace, comm}, status, implementation);
}

int recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request* request, std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().recv_init(buf, count, datatype, source, tag, {call_id, functions().recv_init, comm}, request,
                         implementation);
}

int probe(int source, int tag, MPI_Comm comm, MPI_Status* status, std::uint64_t /*call_id*/,
          std::uint8_t* /*implementation*/) {
  return p2p().probe(source, tag, comm, nullptr, status);
}

int iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status, std::uint64_t /*call_id*/,
           std::uint8_t* /*implementation*/) {
  return p2p().probe(source, tag, comm, flag, status);
}

int mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status,
           std::uint64_t /*call_id*/, std::uint8_t* /*implementation*/) {
  return p2p().mprobe(source, tag, comm, nullptr, message, status);
}

int improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status,
            std::uint64_t /*call_id*/, std::uint8_t* /*implementation*/) {
  return p2p().mprobe(source, tag, comm, flag, message, status);
}

int mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status,
          std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().mrecv(buf, count, datatype, message, {call_id, functions().mrecv, MPI_COMM_NULL}, status,
                     implementation);
}

int imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request,
           std::uint64_t call_id, std::uint8_t* implementation) {
  return p2p().imrecv(buf, count, datatype, message, {call_id, functions().imrecv, MPI_COMM_NULL}, request,
                      implementation);
}

int finish_request(std::uint64_t request_key, MPI_Status* status) {
  return p2p().finish_request(request_key, status);
}

void request_freed(std::uint64_t request_key) {
  p2p().request_freed(request_key);
}

pmpi::RequestWork tracks(std::uint64_t request_key) {
  return p2p().tracks(request_key);
}

} // namespace

void install_point_to_point_entries(pmpi::RuntimeEntries& entries) {
  entries.send = send;
  entries.isend = isend;
  entries.ssend = blocking_send_in_mode<&PointToPointFunctions::ssend, SendMode::Synchronous>;
  entries.rsend = blocking_send_in_mode<&PointToPointFunctions::rsend, SendMode::Ready>;
  entries.bsend = blocking_send_in_mode<&PointToPointFunctions::bsend, SendMode::Buffered>;
  entries.issend = nonblocking_send_in_mode<&PointToPointFunctions::issend, SendMode::Synchronous>;
  entries.irsend = nonblocking_send_in_mode<&PointToPointFunctions::irsend, SendMode::Ready>;
  entries.ibsend = nonblocking_send_in_mode<&PointToPointFunctions::ibsend, SendMode::Buffered>;
  entries.send_init = send_init_in_mode<&PointToPointFunctions::send_init, SendMode::Standard>;
  entries.ssend_init = send_init_in_mode<&PointToPointFunctions::ssend_init, SendMode::Synchronous>;
  entries.rsend_init = send_init_in_mode<&PointToPointFunctions::rsend_init, SendMode::Ready>;
  entries.bsend_init = send_init_in_mode<&PointToPointFunctions::bsend_init, SendMode::Buffered>;
  entries.start = start;
  entries.startall = startall;
  entries.recv = recv;
  entries.irecv = irecv;
  entries.sendrecv = sendrecv;
  entries.sendrecv_replace = sendrecv_replace;
  entries.recv_init = recv_init;
  entries.probe = probe;
  entries.iprobe = iprobe;
  entries.mprobe = mprobe;
  entries.improbe = improbe;
  entries.mrecv = mrecv;
  entries.imrecv = imrecv;
  entries.finish_request = finish_request;
  entries.request_freed = request_freed;
  entries.tracks = tracks;
}

} // namespace commlens::runtime
