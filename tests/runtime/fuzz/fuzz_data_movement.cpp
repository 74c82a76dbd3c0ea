// The collectives that move data without reducing it: MPI_Bcast, MPI_Ibcast, MPI_Allgather,
// MPI_Gather, MPI_Scatter, MPI_Alltoall, MPI_Allgatherv and MPI_Alltoallv. Rank r's element i of
// a call is fill(r, i), so every rank knows what each part of its result must hold.
#include "fuzz_operations.hpp"

#include <numeric>

namespace fuzz {

namespace {

struct Movement {
  const TypeInfo& type;
  std::uint64_t salt;
  std::size_t size; // bytes of one element
};

Movement draw_movement(Context& context) {
  const TypeInfo& type = context.draw_type();
  return {type, context.sequence(), static_cast<std::size_t>(type.size)};
}

std::vector<char> part(const Movement& m, int rank, std::size_t first, std::size_t count) {
  return host_fill(m.type, MPI_SUM, m.salt, rank, first, count);
}

Buffer filled(Context& context, const Movement& m, int rank, std::size_t count) {
  Buffer buffer = context.buffers.make(count * m.size, m.size, context.buffers.draw_memory());
  const std::vector<char> data = part(m, rank, 0, count);
  BufferFactory::write(buffer, 0, data.data(), data.size());
  return buffer;
}

Buffer blank(Context& context, const Movement& m, std::size_t count) {
  Buffer buffer = context.buffers.make(count * m.size, m.size, context.buffers.draw_memory());
  const std::vector<char> garbage(count * m.size, static_cast<char>(0x5A));
  BufferFactory::write(buffer, 0, garbage.data(), garbage.size());
  return buffer;
}

// A gathering call's own block: in place, written into its block of the result buffer (no send
// buffer); else a send buffer of its own.
Buffer contribution(Context& context, const Movement& m, int rank, std::size_t count, bool in_place,
                    const Buffer& result) {
  if (!in_place) {
    return filled(context, m, rank, count);
  }
  const std::vector<char> mine = part(m, rank, 0, count);
  BufferFactory::write(result, static_cast<std::size_t>(rank) * count * m.size, mine.data(), mine.size());
  return {};
}

std::string describe(const char* function, const Movement& m, std::size_t count, const Communicator& c,
                     const Buffer& send, const Buffer& recv) {
  const auto memory = [](const Buffer& b) { return b.data == nullptr ? "-" : memory_name(b.memory); };
  return std::string(function) + " " + m.type.name + " count " + std::to_string(count) + " comm=" + c.name +
         " send=" + memory(send) + " recv=" + memory(recv);
}

long long bytes(const Movement& m, std::size_t elements) {
  return static_cast<long long>(elements * m.size);
}

// MPI_Bcast, or MPI_Ibcast completed by a test loop (as programs overlapping work write it) or
// MPI_Wait, drawn.
void bcast_call(Context& context, const Communicator& c, bool nonblocking) {
  const char* const name = nonblocking ? "MPI_Ibcast" : "MPI_Bcast";
  const Movement m = draw_movement(context);
  const std::size_t count = context.fit(context.draw_count(), m.type, 1);
  const int root = static_cast<int>(context.draw(static_cast<std::uint64_t>(c.size)));
  Buffer buffer = c.rank == root ? filled(context, m, root, count) : blank(context, m, count);
  const std::string what = describe(name, m, count, c, buffer, {}) + " root " + std::to_string(root);
  const long long sent = c.rank == root ? bytes(m, count) : 0;
  const long long received = c.rank == root ? 0 : bytes(m, count);
  const int location = recorded_location(buffer.memory);
  if (nonblocking) {
    MPI_Request request;
    context.expect_ok(MPI_Ibcast(buffer.data, static_cast<int>(count), m.type.type, root, c.comm, &request),
                      what);
    context.log.call(name, sent, received, location, m.type.name, -1);
    if (context.draw(2) == 0) {
      context.expect_ok(MPI_Wait(&request, MPI_STATUS_IGNORE), what + " (wait)");
      context.log.call("MPI_Wait");
    }
    for (int done = 0; done == 0 && request != MPI_REQUEST_NULL;) {
      context.expect_ok(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what + " (test)");
      context.log.call("MPI_Test");
    }
  } else {
    context.expect_ok(MPI_Bcast(buffer.data, static_cast<int>(count), m.type.type, root, c.comm), what);
    context.log.call(name, sent, received, location, m.type.name, -1);
  }
  expect_elements(context, buffer, 0, count, m.type, part(m, root, 0, count), what);
  context.buffers.release(buffer);
}

void bcast(Context& context, const Communicator& c) {
  bcast_call(context, c, false);
}

void ibcast(Context& context, const Communicator& c) {
  bcast_call(context, c, true);
}

// Rank r's block of a gathered result holds fill(r, 0..count).
void expect_blocks(Context& context, const Buffer& buffer, const Movement& m, std::size_t count, int ranks,
                   const std::string& what) {
  for (int r = 0; r < ranks; ++r) {
    expect_elements(context, buffer, static_cast<std::size_t>(r) * count, count, m.type, part(m, r, 0, count),
                    what + " block " + std::to_string(r));
  }
}

// MPI_Allgather, or MPI_Iallgather and its MPI_Wait.
void allgather_call(Context& context, const Communicator& c, bool nonblocking) {
  const char* const name = nonblocking ? "MPI_Iallgather" : "MPI_Allgather";
  const Movement m = draw_movement(context);
  const std::size_t n = static_cast<std::size_t>(c.size);
  const std::size_t count = context.fit(context.draw_count(), m.type, n);
  const bool in_place = context.draw(3) == 0;
  Buffer recv = blank(context, m, count * n);
  Buffer send = contribution(context, m, c.rank, count, in_place, recv);
  const std::string what = describe(name, m, count, c, send, recv) + (in_place ? " in place" : "");
  const int c_count = static_cast<int>(count);
  const void* const input = in_place ? MPI_IN_PLACE : send.data;
  MPI_Request request = MPI_REQUEST_NULL;
  context.expect_ok(
      nonblocking
          ? MPI_Iallgather(input, c_count, m.type.type, recv.data, c_count, m.type.type, c.comm, &request)
          : MPI_Allgather(input, c_count, m.type.type, recv.data, c_count, m.type.type, c.comm),
      what);
  context.log.call(name, bytes(m, count), bytes(m, count * n),
                   recorded_location(in_place ? recv.memory : send.memory), m.type.name, -1);
  if (nonblocking) {
    wait_collective(context, c, request, what);
  }
  expect_blocks(context, recv, m, count, c.size, what);
  if (!in_place) {
    context.buffers.release(send);
  }
  context.buffers.release(recv);
}

void allgather(Context& context, const Communicator& c) {
  allgather_call(context, c, false);
}

void iallgather(Context& context, const Communicator& c) {
  allgather_call(context, c, true);
}

void gather(Context& context, const Communicator& c) {
  const Movement m = draw_movement(context);
  const std::size_t n = static_cast<std::size_t>(c.size);
  const std::size_t count = context.fit(context.draw_count(), m.type, n);
  const int root = static_cast<int>(context.draw(n));
  const bool in_place = context.draw(3) == 0 && c.rank == root;
  Buffer recv = c.rank == root ? blank(context, m, count * n) : Buffer{};
  Buffer send = contribution(context, m, c.rank, count, in_place, recv);
  const std::string what = describe("MPI_Gather", m, count, c, send, recv) + " root " + std::to_string(root);
  const int c_count = static_cast<int>(count);
  context.expect_ok(MPI_Gather(in_place ? MPI_IN_PLACE : send.data, c_count, m.type.type, recv.data, c_count,
                               m.type.type, root, c.comm),
                    what);
  context.log.call("MPI_Gather", bytes(m, count), c.rank == root ? bytes(m, count * n) : 0,
                   recorded_location(in_place ? recv.memory : send.memory), m.type.name, -1);
  if (c.rank == root) {
    expect_blocks(context, recv, m, count, c.size, what);
    context.buffers.release(recv);
  }
  if (!in_place) {
    context.buffers.release(send);
  }
}

void scatter(Context& context, const Communicator& c) {
  const Movement m = draw_movement(context);
  const std::size_t n = static_cast<std::size_t>(c.size);
  const std::size_t count = context.fit(context.draw_count(), m.type, n);
  const int root = static_cast<int>(context.draw(n));
  const bool in_place = context.draw(3) == 0 && c.rank == root;
  // The root's send buffer: block r is what rank r must receive (root's fill at r*count...).
  Buffer send = c.rank == root ? filled(context, m, root, count * n) : Buffer{};
  Buffer recv = in_place ? Buffer{} : blank(context, m, count);
  const std::string what = describe("MPI_Scatter", m, count, c, send, recv) + " root " + std::to_string(root);
  const int c_count = static_cast<int>(count);
  context.expect_ok(MPI_Scatter(send.data, c_count, m.type.type, in_place ? MPI_IN_PLACE : recv.data, c_count,
                                m.type.type, root, c.comm),
                    what);
  context.log.call("MPI_Scatter", c.rank == root ? bytes(m, count * n) : 0, bytes(m, count),
                   c.rank == root ? recorded_location(send.memory) : RowLog::kAny, m.type.name, -1);
  if (!in_place) {
    const std::size_t first = static_cast<std::size_t>(c.rank) * count;
    expect_elements(context, recv, 0, count, m.type, part(m, root, first, count), what);
    context.buffers.release(recv);
  }
  if (c.rank == root) {
    context.buffers.release(send);
  }
}

void alltoall(Context& context, const Communicator& c) {
  const Movement m = draw_movement(context);
  const std::size_t n = static_cast<std::size_t>(c.size);
  const std::size_t count = context.fit(context.draw_count(), m.type, n);
  // Block j of rank r's send buffer is fill(r, j*count...): what rank j receives from r.
  Buffer send = filled(context, m, c.rank, count * n);
  Buffer recv = blank(context, m, count * n);
  const std::string what = describe("MPI_Alltoall", m, count, c, send, recv);
  const int c_count = static_cast<int>(count);
  context.expect_ok(MPI_Alltoall(send.data, c_count, m.type.type, recv.data, c_count, m.type.type, c.comm),
                    what);
  context.log.call("MPI_Alltoall", bytes(m, count * n), bytes(m, count * n), recorded_location(send.memory),
                   m.type.name, -1);
  for (int r = 0; r < c.size; ++r) {
    expect_elements(context, recv, static_cast<std::size_t>(r) * count, count, m.type,
                    part(m, r, static_cast<std::size_t>(c.rank) * count, count),
                    what + " from " + std::to_string(r));
  }
  context.buffers.release(send);
  context.buffers.release(recv);
}

// Counts that differ per pair, and displacements with a gap of one element between blocks.
std::size_t pair_count(std::size_t base, int from, int to) {
  return base + static_cast<std::size_t>((from * 7 + to * 3) % 5);
}

void allgatherv(Context& context, const Communicator& c) {
  const Movement m = draw_movement(context);
  const std::size_t n = static_cast<std::size_t>(c.size);
  const std::size_t base = context.fit(context.draw_count(), m.type, n + 5);
  std::vector<int> counts(n);
  std::vector<int> displacements(n);
  std::size_t total = 0;
  for (int r = 0; r < c.size; ++r) {
    counts[r] = static_cast<int>(pair_count(base, r, 0));
    displacements[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(counts[r]) + 1;
  }
  Buffer send = filled(context, m, c.rank, static_cast<std::size_t>(counts[c.rank]));
  Buffer recv = blank(context, m, total);
  const std::string what = describe("MPI_Allgatherv", m, base, c, send, recv);
  context.expect_ok(MPI_Allgatherv(send.data, counts[c.rank], m.type.type, recv.data, counts.data(),
                                   displacements.data(), m.type.type, c.comm),
                    what);
  const std::size_t received = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  context.log.call("MPI_Allgatherv", bytes(m, static_cast<std::size_t>(counts[c.rank])), bytes(m, received),
                   recorded_location(send.memory), m.type.name, -1);
  for (int r = 0; r < c.size; ++r) {
    expect_elements(context, recv, static_cast<std::size_t>(displacements[r]),
                    static_cast<std::size_t>(counts[r]), m.type,
                    part(m, r, 0, static_cast<std::size_t>(counts[r])), what + " block " + std::to_string(r));
  }
  // The gaps keep what was there: MPI writes only the blocks.
  const std::vector<char> gap(m.size, static_cast<char>(0x5A));
  for (int r = 0; r < c.size; ++r) {
    expect_elements(context, recv, static_cast<std::size_t>(displacements[r] + counts[r]), 1, m.type, gap,
                    what + " gap after block " + std::to_string(r));
  }
  context.buffers.release(send);
  context.buffers.release(recv);
}

void alltoallv(Context& context, const Communicator& c) {
  const Movement m = draw_movement(context);
  const std::size_t n = static_cast<std::size_t>(c.size);
  const std::size_t base = context.fit(context.draw_count(), m.type, 2 * n + 10);
  std::vector<int> send_counts(n), send_displacements(n), recv_counts(n), recv_displacements(n);
  std::size_t send_total = 0;
  std::size_t recv_total = 0;
  for (int r = 0; r < c.size; ++r) {
    send_counts[r] = static_cast<int>(pair_count(base, c.rank, r));
    send_displacements[r] = static_cast<int>(send_total);
    send_total += static_cast<std::size_t>(send_counts[r]) + 1;
    recv_counts[r] = static_cast<int>(pair_count(base, r, c.rank));
    recv_displacements[r] = static_cast<int>(recv_total);
    recv_total += static_cast<std::size_t>(recv_counts[r]) + 1;
  }
  // Rank r sends its elements send_displacements[j].. to rank j: fill(r, displacement...).
  Buffer send = filled(context, m, c.rank, send_total);
  Buffer recv = blank(context, m, recv_total);
  const std::string what = describe("MPI_Alltoallv", m, base, c, send, recv);
  context.expect_ok(MPI_Alltoallv(send.data, send_counts.data(), send_displacements.data(), m.type.type,
                                  recv.data, recv_counts.data(), recv_displacements.data(), m.type.type,
                                  c.comm),
                    what);
  const std::size_t sent = std::accumulate(send_counts.begin(), send_counts.end(), std::size_t{0});
  const std::size_t received = std::accumulate(recv_counts.begin(), recv_counts.end(), std::size_t{0});
  context.log.call("MPI_Alltoallv", bytes(m, sent), bytes(m, received), recorded_location(send.memory),
                   m.type.name, -1);
  for (int r = 0; r < c.size; ++r) {
    // Where rank r put the block for this rank in its send buffer.
    std::size_t from = 0;
    for (int j = 0; j < c.rank; ++j) {
      from += pair_count(base, r, j) + 1;
    }
    expect_elements(context, recv, static_cast<std::size_t>(recv_displacements[r]),
                    static_cast<std::size_t>(recv_counts[r]), m.type,
                    part(m, r, from, static_cast<std::size_t>(recv_counts[r])),
                    what + " from " + std::to_string(r));
  }
  context.buffers.release(send);
  context.buffers.release(recv);
}

} // namespace

void add_data_movement(std::vector<NamedOperation>& list) {
  list.insert(list.end(), {{"bcast", bcast},
                           {"ibcast", ibcast},
                           {"allgather", allgather},
                           {"iallgather", iallgather},
                           {"gather", gather},
                           {"scatter", scatter},
                           {"alltoall", alltoall},
                           {"allgatherv", allgatherv},
                           {"alltoallv", alltoallv}});
}

} // namespace fuzz
