// Point-to-point on a ring (each rank sends to the next and receives from the previous):
// MPI_Sendrecv, MPI_Isend/MPI_Irecv completed by MPI_Waitall in either order, persistent requests
// started twice, and MPI_Mprobe/MPI_Mrecv. The message from rank r holds fill(r, ...).
#include "fuzz_operations.hpp"

namespace fuzz {

namespace {

struct Ring {
  const TypeInfo& type;
  std::uint64_t salt;
  std::size_t count;
  int right;
  int left;
  int tag;
};

Ring draw_ring(Context& context, const Communicator& c) {
  const TypeInfo& type = context.draw_type();
  const std::uint64_t salt = context.sequence();
  const std::size_t count = context.fit(context.draw_count(), type, 1);
  const int tag = static_cast<int>(context.draw(1000));
  return {type, salt, count, (c.rank + 1) % c.size, (c.rank + c.size - 1) % c.size, tag};
}

std::vector<char> message(const Ring& ring, int from) {
  return host_fill(ring.type, MPI_SUM, ring.salt, from, 0, ring.count);
}

Buffer outgoing(Context& context, const Ring& ring, int rank) {
  const std::size_t size = static_cast<std::size_t>(ring.type.size);
  Buffer buffer = context.buffers.make(ring.count * size, size, context.buffers.draw_memory());
  const std::vector<char> data = message(ring, rank);
  BufferFactory::write(buffer, 0, data.data(), data.size());
  return buffer;
}

Buffer incoming(Context& context, const Ring& ring) {
  const std::size_t size = static_cast<std::size_t>(ring.type.size);
  Buffer buffer = context.buffers.make(ring.count * size, size, context.buffers.draw_memory());
  const std::vector<char> garbage(ring.count * size, static_cast<char>(0x3C));
  BufferFactory::write(buffer, 0, garbage.data(), garbage.size());
  return buffer;
}

std::string describe(const char* function, const Ring& ring, const Buffer& send, const Buffer& recv,
                     const Communicator& c) {
  return std::string(function) + " " + ring.type.name + " count " + std::to_string(ring.count) +
         " send=" + memory_name(send.memory) + " recv=" + memory_name(recv.memory) + " comm=" + c.name;
}

long long bytes(const Ring& ring) {
  return static_cast<long long>(ring.count) * ring.type.size;
}

void expect_ok(Context& context, int rc, const std::string& what) {
  if (rc != MPI_SUCCESS) {
    context.mismatch(what + ": returned " + std::to_string(rc), -1);
  }
}

void finish(Context& context, const Ring& ring, Buffer& send, Buffer& recv, const std::string& what) {
  expect_elements(context, recv, 0, ring.count, ring.type, message(ring, ring.left), what);
  context.buffers.release(send);
  context.buffers.release(recv);
}

void sendrecv(Context& context, const Communicator& c) {
  const Ring ring = draw_ring(context, c);
  Buffer send = outgoing(context, ring, c.rank);
  Buffer recv = incoming(context, ring);
  const std::string what = describe("MPI_Sendrecv", ring, send, recv, c);
  const int count = static_cast<int>(ring.count);
  expect_ok(context,
            MPI_Sendrecv(send.data, count, ring.type.type, ring.right, ring.tag, recv.data, count,
                         ring.type.type, ring.left, ring.tag, c.comm, MPI_STATUS_IGNORE),
            what);
  context.log.call("MPI_Sendrecv", bytes(ring), bytes(ring), recorded_location(send.memory), ring.type.name,
                   c.world_ranks[ring.right]);
  finish(context, ring, send, recv, what);
}

void nonblocking(Context& context, const Communicator& c) {
  const Ring ring = draw_ring(context, c);
  const bool receive_first = context.draw(2) == 0;
  Buffer send = outgoing(context, ring, c.rank);
  Buffer recv = incoming(context, ring);
  const std::string what = describe("MPI_Isend/MPI_Irecv", ring, send, recv, c);
  const int count = static_cast<int>(ring.count);
  MPI_Request requests[2];
  const auto post_receive = [&](MPI_Request* request) {
    expect_ok(context, MPI_Irecv(recv.data, count, ring.type.type, ring.left, ring.tag, c.comm, request),
              what);
    context.log.call("MPI_Irecv", 0, bytes(ring), recorded_location(recv.memory), ring.type.name,
                     c.world_ranks[ring.left]);
  };
  const auto post_send = [&](MPI_Request* request) {
    expect_ok(context, MPI_Isend(send.data, count, ring.type.type, ring.right, ring.tag, c.comm, request),
              what);
    context.log.call("MPI_Isend", bytes(ring), 0, recorded_location(send.memory), ring.type.name,
                     c.world_ranks[ring.right]);
  };
  if (receive_first) {
    post_receive(&requests[0]);
    post_send(&requests[1]);
  } else {
    post_send(&requests[1]);
    post_receive(&requests[0]);
  }
  expect_ok(context, MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), what + " (waitall)");
  context.log.call("MPI_Waitall");
  finish(context, ring, send, recv, what);
}

void persistent(Context& context, const Communicator& c) {
  const Ring ring = draw_ring(context, c);
  Buffer send = outgoing(context, ring, c.rank);
  Buffer recv = incoming(context, ring);
  const std::string what = describe("MPI_Send_init/MPI_Recv_init", ring, send, recv, c);
  const int count = static_cast<int>(ring.count);
  MPI_Request requests[2];
  expect_ok(context,
            MPI_Recv_init(recv.data, count, ring.type.type, ring.left, ring.tag, c.comm, &requests[0]), what);
  context.log.call("MPI_Recv_init", 0, 0, recorded_location(recv.memory), ring.type.name,
                   c.world_ranks[ring.left]);
  expect_ok(context,
            MPI_Send_init(send.data, count, ring.type.type, ring.right, ring.tag, c.comm, &requests[1]),
            what);
  context.log.call("MPI_Send_init", 0, 0, recorded_location(send.memory), ring.type.name,
                   c.world_ranks[ring.right]);
  for (int round = 0; round < 2; ++round) {
    // Each start sends the buffer as it is then: the second round's data differs from the first's.
    if (round == 1) {
      const std::vector<char> garbage(ring.count * static_cast<std::size_t>(ring.type.size),
                                      static_cast<char>(0x11));
      BufferFactory::write(recv, 0, garbage.data(), garbage.size());
    }
    expect_ok(context, MPI_Startall(2, requests), what + " (startall)");
    context.log.call("MPI_Startall");
    expect_ok(context, MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), what + " (waitall)");
    context.log.call("MPI_Waitall");
    expect_elements(context, recv, 0, ring.count, ring.type, message(ring, ring.left),
                    what + " round " + std::to_string(round));
  }
  for (MPI_Request& request : requests) {
    expect_ok(context, MPI_Request_free(&request), what + " (free)");
    context.log.call("MPI_Request_free");
  }
  context.buffers.release(send);
  context.buffers.release(recv);
}

void matched_probe(Context& context, const Communicator& c) {
  const Ring ring = draw_ring(context, c);
  Buffer send = outgoing(context, ring, c.rank);
  Buffer recv = incoming(context, ring);
  const std::string what = describe("MPI_Mprobe/MPI_Mrecv", ring, send, recv, c);
  const int count = static_cast<int>(ring.count);
  MPI_Request request;
  expect_ok(context, MPI_Isend(send.data, count, ring.type.type, ring.right, ring.tag, c.comm, &request),
            what);
  context.log.call("MPI_Isend", bytes(ring), 0, recorded_location(send.memory), ring.type.name,
                   c.world_ranks[ring.right]);
  MPI_Message handle;
  MPI_Status status;
  expect_ok(context, MPI_Mprobe(ring.left, ring.tag, c.comm, &handle, &status), what + " (mprobe)");
  context.log.call("MPI_Mprobe");
  int probed = 0;
  MPI_Get_count(&status, ring.type.type, &probed);
  if (probed != count) {
    context.mismatch(what + ": probed count " + std::to_string(probed), -1);
  }
  expect_ok(context, MPI_Mrecv(recv.data, count, ring.type.type, &handle, MPI_STATUS_IGNORE),
            what + " (mrecv)");
  context.log.call("MPI_Mrecv", 0, bytes(ring), recorded_location(recv.memory), ring.type.name,
                   c.world_ranks[ring.left]);
  expect_ok(context, MPI_Wait(&request, MPI_STATUS_IGNORE), what + " (wait)");
  context.log.call("MPI_Wait");
  finish(context, ring, send, recv, what);
}

} // namespace

void add_point_to_point(std::vector<NamedOperation>& list) {
  list.insert(list.end(), {{"sendrecv", sendrecv},
                           {"isend_irecv", nonblocking},
                           {"persistent", persistent},
                           {"mprobe_mrecv", matched_probe}});
}

} // namespace fuzz
