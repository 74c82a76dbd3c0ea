#pragma once
// Device-buffer point-to-point as the runtime runs it (COMMLENS_RUNTIME_COLLECTIVES names p2p):
// per call, the choice between the rendezvous (contiguous device messages of at least
// kRendezvousMinBytes to a rank that can map this GPU) and the host path (staged through pinned
// memory, the baseline a non-CUDA-aware MPI needs), the requests it posted that a wait/test call
// must finish, and one runtime_ops row per device-buffer call (per direction for Sendrecv).
// Probes see the data's size, not a header's (probed_messages.hpp).
#include "engine/ab_alternation.hpp"
#include "engine/runtime_records.hpp"
#include "point_to_point/rendezvous_receiver.hpp"
#include "point_to_point/rendezvous_sender.hpp"

#include <atomic>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace commlens::runtime {

// MPI's four send modes; each has its blocking and its nonblocking PMPI call.
enum class SendMode { Standard, Synchronous, Ready, Buffered };

// Where a send goes and how: what it hands to PMPI, whatever it sends (the message, its staged
// copy, or a rendezvous header).
struct SendTarget {
  int dest;
  int tag;
  MPI_Comm comm;
  SendMode mode;

  // The mode's PMPI call (request null: the blocking one).
  int pmpi_send(const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) const;
  // The mode's persistent send (MPI_Send_init, MPI_Ssend_init, ...).
  int pmpi_send_init(const void* buf, int count, MPI_Datatype datatype, MPI_Request* request) const;
};

// The recorded call a runtime_ops row belongs to.
struct CallContext {
  std::uint64_t call_id;
  FunctionId function;
  MPI_Comm comm;
};

class PointToPoint {
public:
  PointToPoint(const contract::CudaPluginHost& host, RuntimeMode mode, IpcHandleCache& cache,
               RuntimeRecords& records, const StripeSettings& stripe);

  // request null: blocking. *implementation: what the call ran (mpi_calls.implementation). The
  // mode's PMPI call sends what goes on the wire, so the mode's meaning holds: a synchronous send
  // completes once the receive has matched (the header, for a rendezvous), a ready one needs the
  // receive posted, a buffered one uses the attached buffer (for the header only, for a rendezvous,
  // which then completes locally: the message is copied into a block of the sender's if not claimed).
  int send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, const CallContext& call,
           MPI_Request* request, std::uint8_t* implementation, SendMode mode = SendMode::Standard);
  int recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, const CallContext& call,
           MPI_Status* status, std::uint8_t* implementation);
  int irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, const CallContext& call,
            MPI_Request* request, std::uint8_t* implementation);
  // Sendrecv and, with sendbuf null, Sendrecv_replace (the send goes from a host copy of recvbuf).
  int sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
               const CallContext& call, MPI_Status* status, std::uint8_t* implementation);
  // A persistent send from a device buffer is bound to a pinned image of the buffer's span, which
  // each MPI_Start fills from the device before MPI sends it (the host path: what a program must
  // do itself with this MPI); it stays registered until MPI_Request_free.
  int send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, const CallContext& call,
                MPI_Request* request, std::uint8_t* implementation, SendMode mode);
  // MPI_Start (startall false, count 1) and MPI_Startall: stages the registered persistent sends
  // among the requests, then starts them all; call.function names the call in the rows.
  int start(bool startall, int count, MPI_Request* requests, const CallContext& call,
            std::uint8_t* implementation);
  // A persistent receive stays registered until MPI_Request_free: each completion is finished.
  int recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, const CallContext& call,
                MPI_Request* request, std::uint8_t* implementation);
  // MPI_Probe (flag null) / MPI_Iprobe and MPI_Mprobe (flag null) / MPI_Improbe.
  int probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
  int mprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);
  // call.comm is unused: a message knows its communicator.
  int mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, const CallContext& call,
            MPI_Status* status, std::uint8_t* implementation);
  int imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, const CallContext& call,
             MPI_Request* request, std::uint8_t* implementation);
  int finish_request(std::uint64_t request_key, MPI_Status* status);
  // MPI_Request_free of a request that is not in flight (detached_requests.hpp waits for those).
  void request_freed(std::uint64_t request_key);
  contract::RequestWork tracks(std::uint64_t request_key);
  void forget(MPI_Comm comm) {
    peers_.forget(comm);
    probed_.forget(comm);
  }
  void finalize();

private:
  struct PendingSend {
    PooledBuffer image{};                       // a staged send's host copy
    std::unique_ptr<RendezvousHeader> header{}; // a rendezvous: the header MPI sends
    std::int32_t slot = -1;                     // and its hand-over slot
    std::size_t bytes = 0;
  };
  struct PersistentSend {
    const void* buf;
    MessageLayout layout;
    PooledBuffer image; // what MPI sends from
    MPI_Comm comm;
  };
  struct PendingReceive {
    PostedReceive posted;
    RuntimeOp record;
    MPI_Comm comm;           // whose error handler hears of errors found at completion
    bool persistent = false; // MPI_Recv_init: stays for the next MPI_Start
  };

  RuntimeOp start_record(const CallContext& call, std::uint64_t bytes, std::uint64_t start_ns) const;
  bool rendezvous_turn(int count, MPI_Datatype datatype);
  // *host_bytes: how much of the message the host path carried (striped).
  int send_rendezvous(const RendezvousHeader& header, const SendTarget& target, std::uint64_t* host_bytes);
  int isend_rendezvous(const RendezvousHeader& header, const SendTarget& target, MPI_Request* request);
  int staged_send(const void* buf, int count, MPI_Datatype datatype, const MessageLayout& layout,
                  const SendTarget& target, MPI_Request* request, RuntimeOp& record);
  int send_from_copy(PooledBuffer image, const MessageLayout& layout, int count, MPI_Datatype datatype,
                     const SendTarget& target, MPI_Request* request);
  int send_host_copy(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                     const CallContext& call, MPI_Request* request);
  void finish_receive_record(RuntimeOp record, const ReceiveOutcome& outcome);
  // A receive the call completes itself: from `kept` (a message a probe received) when not null,
  // else through from_mpi(the location MPI receives into, the status).
  int receive_now(void* buf, int count, MPI_Datatype datatype, const ProbedMessage* kept,
                  const std::function<int(void*, MPI_Status*)>& from_mpi, const CallContext& call,
                  std::uint64_t start_ns, MPI_Status* status, std::uint8_t* implementation);
  // A nonblocking receive: from `kept` at once (the request is complete from the start), else
  // posted through post(location, request) and finished by the wait/test call that completes it.
  int receive_later(void* buf, int count, MPI_Datatype datatype, const ProbedMessage* kept,
                    const std::function<int(void*, MPI_Request*)>& post, const CallContext& call,
                    std::uint64_t start_ns, MPI_Request* request, std::uint8_t* implementation,
                    bool persistent = false);
  int finish_receive(PendingReceive& pending, MPI_Status* status);
  static CallContext in_message_comm(const CallContext& call, const RedeemedMessage& redeemed);

  // The run table's runtime_p2p_striping: the share, what this rank striped, any problem.
  std::string striping_summary();

  const contract::CudaPluginHost& host_;
  RuntimeMode mode_;
  StripeSettings stripe_;
  std::atomic<std::uint64_t> striped_sends_{0}; // blocking sends whose rows say striped
  std::atomic<std::uint64_t> striped_receives_{0};
  RuntimeRecords& records_;
  BufferPool pinned_;
  PeerDirectory peers_;
  StripeRings rings_;
  RendezvousSender sender_;
  RendezvousReceiver receiver_;
  ProbedMessages probed_;
  std::mutex mutex_;
  std::unordered_map<std::uint64_t, PendingSend> pending_sends_;
  std::unordered_map<std::uint64_t, PendingReceive> pending_receives_;
  std::unordered_map<std::uint64_t, PersistentSend> persistent_sends_;
  std::atomic<std::size_t> pending_{0}; // the three maps' sizes: wait/test calls skip the lock when 0
  AbAlternation<int, MPI_Datatype> ab_; // COMMLENS_RUNTIME=ab: rendezvous and host path by turns
};

} // namespace commlens::runtime
