// p2p_check: the synchronous, ready and buffered send modes, blocking, nonblocking and persistent.
#include "p2p_check.hpp"

#include <unistd.h>

namespace p2p_check {

namespace {

struct SendMode {
  const char* name;
  int (*blocking)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  int (*nonblocking)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  bool synchronous;
  bool ready;
};

void send_in_mode(const SendMode& mode, const Buffer& buffer, int count, int dest, int tag) {
  if (mode.blocking != nullptr) {
    mode.blocking(buffer.data(), count, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    return;
  }
  MPI_Request request;
  mode.nonblocking(buffer.data(), count, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

} // namespace

void send_modes(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  const SendMode modes[] = {
      {"MPI_Ssend", MPI_Ssend, nullptr, true, false},  {"MPI_Issend", nullptr, MPI_Issend, true, false},
      {"MPI_Rsend", MPI_Rsend, nullptr, false, true},  {"MPI_Irsend", nullptr, MPI_Irsend, false, true},
      {"MPI_Bsend", MPI_Bsend, nullptr, false, false}, {"MPI_Ibsend", nullptr, MPI_Ibsend, false, false}};
  // Room for two messages: a buffered send's copy may stay until MPI has delivered it.
  std::vector<char> attached(2 * (large + MPI_BSEND_OVERHEAD) + (1 << 20));
  MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
  int message = 0;
  for (const std::size_t bytes : {std::size_t{1000}, large}) {
    const int count = static_cast<int>(bytes);
    for (const SendMode& mode : modes) {
      for (const bool lower_sends : {true, false}) {
        const bool i_send = lower_sends == pair.first;
        const auto data = pattern(seed + static_cast<std::uint64_t>(message), bytes);
        const int tag = 180 + message % 7;
        const std::string what = std::string(mode.name) + " " + std::to_string(bytes) + " B";
        Buffer buffer(true, bytes, static_cast<std::size_t>(message % 4));
        if (i_send) {
          buffer.write(data);
          pair_barrier(pair);
          const double start = MPI_Wtime();
          send_in_mode(mode, buffer, count, pair.partner, tag);
          if (mode.synchronous && MPI_Wtime() - start < 0.1) {
            check.fail(what + ": completed before the receive was posted");
          }
        } else {
          MPI_Request request = MPI_REQUEST_NULL;
          if (mode.ready) { // a ready send needs its receive posted
            MPI_Irecv(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &request);
          }
          pair_barrier(pair);
          if (mode.synchronous) {
            usleep(200000);
          }
          if (!mode.ready) {
            MPI_Irecv(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &request);
          }
          MPI_Status status;
          MPI_Wait(&request, &status);
          check.expect_bytes(buffer, data, bytes, what);
          check.expect_status(status, MPI_BYTE, count, pair.partner, tag, what);
        }
        check.count_rendezvous(true, bytes, i_send);
        ++message;
      }
    }
  }
  void* detached = nullptr;
  int detached_bytes = 0;
  MPI_Buffer_detach(&detached, &detached_bytes);
}

void persistent_sends(Checker& check, const Pair& pair, std::size_t large, std::uint64_t seed) {
  struct PersistentMode {
    const char* name;
    int (*init)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
    int starts;
  };
  // A persistent buffered send is started once: Open MPI 4.1 before its fix (open-mpi/ompi#14366)
  // sends the first start's data again at every later start of a large one.
  const PersistentMode modes[] = {{"MPI_Send_init", MPI_Send_init, 3},
                                  {"MPI_Ssend_init", MPI_Ssend_init, 3},
                                  {"MPI_Rsend_init", MPI_Rsend_init, 3},
                                  {"MPI_Bsend_init", MPI_Bsend_init, 1}};
  std::vector<char> attached(2 * (large + MPI_BSEND_OVERHEAD) + (1 << 20));
  MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
  int message = 0;
  for (const std::size_t bytes : {std::size_t{1000}, large}) {
    const int count = static_cast<int>(bytes);
    for (const auto& [name, init, starts] : modes) {
      for (const bool lower_sends : {true, false}) {
        const bool i_send = lower_sends == pair.first;
        const int tag = 190 + message % 7;
        Buffer buffer(true, bytes, static_cast<std::size_t>(message % 4));
        MPI_Request request;
        if (i_send) {
          init(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &request);
        }
        for (int start = 0; start < starts; ++start) {
          const auto data = pattern(seed + static_cast<std::uint64_t>(message * 3 + start), bytes);
          const std::string what =
              std::string(name) + " " + std::to_string(bytes) + " B, start " + std::to_string(start);
          if (i_send) {
            buffer.write(data);
            pair_barrier(pair); // the receive is posted (as a ready send needs)
            if (start < 2) {
              MPI_Start(&request);
            } else {
              MPI_Startall(1, &request);
            }
            MPI_Wait(&request, MPI_STATUS_IGNORE);
          } else {
            MPI_Request receive;
            MPI_Irecv(buffer.data(), count, MPI_BYTE, pair.partner, tag, MPI_COMM_WORLD, &receive);
            pair_barrier(pair);
            MPI_Status status;
            MPI_Wait(&receive, &status);
            check.expect_bytes(buffer, data, bytes, what);
            check.expect_status(status, MPI_BYTE, count, pair.partner, tag, what);
          }
        }
        if (i_send) {
          MPI_Request_free(&request);
        }
        ++message;
      }
    }
  }
  void* detached = nullptr;
  int detached_bytes = 0;
  MPI_Buffer_detach(&detached, &detached_bytes);
}
} // namespace p2p_check
