// The reductions: MPI_Allreduce (the runtime's own algorithms), MPI_Iallreduce, MPI_Reduce,
// MPI_Scan, MPI_Reduce_scatter_block and MPI_Ireduce_scatter (uneven blocks, some empty), each with a random
// type, op, count, root, in-place choice and memory per buffer, checked against the host reference on every
// rank.
#include "fuzz_operations.hpp"

#include <algorithm>
#include <numeric>

namespace fuzz {

namespace {

// The call's inputs and output, filled and described the same way for every reduction.
struct Reduction {
  const TypeInfo& type;
  const OpInfo& op;
  std::size_t count;
  bool in_place;
  std::uint64_t salt;
  Buffer send;
  Buffer recv;
};

Reduction prepare(Context& context, const Communicator& c, std::size_t elements_in, std::size_t elements_out,
                  bool in_place) {
  const TypeInfo& type = context.draw_type();
  const OpInfo& op = context.draw_op(type);
  Reduction r{type, op, elements_in, in_place, context.sequence(), {}, {}};
  const std::size_t size = static_cast<std::size_t>(type.size);
  r.recv =
      context.buffers.make(std::max(elements_in, elements_out) * size, size, context.buffers.draw_memory());
  const std::vector<char> mine = host_fill(type, op.op, r.salt, c.rank, 0, elements_in);
  if (in_place) {
    BufferFactory::write(r.recv, 0, mine.data(), mine.size());
  } else {
    r.send = context.buffers.make(elements_in * size, size, context.buffers.draw_memory());
    BufferFactory::write(r.send, 0, mine.data(), mine.size());
    const std::vector<char> garbage(elements_out * size, static_cast<char>(0xA5));
    BufferFactory::write(r.recv, 0, garbage.data(), garbage.size());
  }
  return r;
}

std::string describe(const char* function, const Reduction& r, const Communicator& c) {
  return std::string(function) + " " + r.type.name + " " + r.op.name + " count " + std::to_string(r.count) +
         (r.in_place ? " in place" : "") + " send=" + (r.in_place ? "-" : memory_name(r.send.memory)) +
         " recv=" + memory_name(r.recv.memory) + " comm=" + c.name;
}

int location(const Reduction& r) {
  return recorded_location(r.in_place ? r.recv.memory : r.send.memory);
}

void release(Context& context, Reduction& r) {
  if (!r.in_place) {
    context.buffers.release(r.send);
  }
  context.buffers.release(r.recv);
}

const void* send_pointer(const Reduction& r) {
  return r.in_place ? MPI_IN_PLACE : r.send.data;
}

std::vector<char> reference(const Reduction& r, int ranks, std::size_t first, std::size_t count) {
  std::vector<char> expected(count * static_cast<std::size_t>(r.type.size));
  reduce_reference(r.type, r.op.op, r.salt, ranks, first, count, expected.data());
  return expected;
}

long long bytes(const Reduction& r, std::size_t elements) {
  return static_cast<long long>(elements) * r.type.size;
}

void allreduce(Context& context, const Communicator& c) {
  const std::size_t count = context.fit(context.draw_count(), types().back(), 1);
  Reduction r = prepare(context, c, count, count, context.draw(3) == 0);
  const std::string what = describe("MPI_Allreduce", r, c);
  context.expect_ok(
      MPI_Allreduce(send_pointer(r), r.recv.data, static_cast<int>(count), r.type.type, r.op.op, c.comm),
      what);
  context.log.call("MPI_Allreduce", bytes(r, count), bytes(r, count), location(r), r.type.name, -1);
  expect_elements(context, r.recv, 0, count, r.type, reference(r, c.size, 0, count), what);
  release(context, r);
}

void iallreduce(Context& context, const Communicator& c) {
  const std::size_t count = context.fit(context.draw_count(), types().back(), 1);
  Reduction r = prepare(context, c, count, count, context.draw(3) == 0);
  const std::string what = describe("MPI_Iallreduce", r, c);
  MPI_Request request;
  context.expect_ok(MPI_Iallreduce(send_pointer(r), r.recv.data, static_cast<int>(count), r.type.type,
                                   r.op.op, c.comm, &request),
                    what);
  context.log.call("MPI_Iallreduce", bytes(r, count), bytes(r, count), location(r), r.type.name, -1);
  wait_collective(context, c, request, what);
  expect_elements(context, r.recv, 0, count, r.type, reference(r, c.size, 0, count), what);
  release(context, r);
}

// Completes every request with one wait or test call form, drawn; logs each call it makes.
void complete_all(Context& context, std::vector<MPI_Request>& requests, const std::string& what) {
  const int n = static_cast<int>(requests.size());
  const auto pending = [&] {
    return std::any_of(requests.begin(), requests.end(), [](MPI_Request r) { return r != MPI_REQUEST_NULL; });
  };
  const std::uint64_t form = context.draw(8);
  std::vector<int> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = order.size(); i > 1; --i) { // shuffled alike on every rank
    std::swap(order[i - 1], order[context.draw(i)]);
  }
  std::vector<int> indices(requests.size());
  int flag = 0;
  int index = 0;
  int outcount = 0;
  const auto logged = [&](const char* name, int rc) {
    context.expect_ok(rc, what + " (" + name + ")");
    context.log.call(name);
  };
  switch (form) {
  case 0:
    for (int i : order) {
      logged("MPI_Wait", MPI_Wait(&requests[i], MPI_STATUS_IGNORE));
    }
    break;
  case 1:
    logged("MPI_Waitall", MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE));
    break;
  case 2:
    while (pending()) {
      logged("MPI_Waitany", MPI_Waitany(n, requests.data(), &index, MPI_STATUS_IGNORE));
    }
    break;
  case 3:
    while (pending()) {
      logged("MPI_Waitsome",
             MPI_Waitsome(n, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE));
    }
    break;
  case 4:
    while (pending()) {
      for (int i : order) {
        logged("MPI_Test", MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE));
      }
    }
    break;
  case 5:
    for (flag = 0; flag == 0;) {
      logged("MPI_Testall", MPI_Testall(n, requests.data(), &flag, MPI_STATUSES_IGNORE));
    }
    break;
  case 6:
    while (pending()) {
      logged("MPI_Testany", MPI_Testany(n, requests.data(), &index, &flag, MPI_STATUS_IGNORE));
    }
    break;
  default:
    while (pending()) {
      logged("MPI_Testsome",
             MPI_Testsome(n, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE));
    }
    break;
  }
}

// Two to five MPI_Iallreduce calls outstanding at once on one communicator, completed together.
void iallreduce_outstanding(Context& context, const Communicator& c) {
  std::vector<Reduction> calls;
  std::vector<MPI_Request> requests;
  const std::size_t outstanding = 2 + context.draw(4);
  std::string what = "outstanding";
  for (std::size_t i = 0; i < outstanding; ++i) {
    const std::size_t count = context.fit(context.draw_count(), types().back(), 1);
    calls.push_back(prepare(context, c, count, count, context.draw(3) == 0));
    Reduction& r = calls.back();
    what += " [" + describe("MPI_Iallreduce", r, c) + "]";
    requests.push_back(MPI_REQUEST_NULL);
    context.expect_ok(MPI_Iallreduce(send_pointer(r), r.recv.data, static_cast<int>(count), r.type.type,
                                     r.op.op, c.comm, &requests.back()),
                      what);
    context.log.call("MPI_Iallreduce", bytes(r, count), bytes(r, count), location(r), r.type.name, -1);
  }
  complete_all(context, requests, what);
  for (Reduction& r : calls) {
    expect_elements(context, r.recv, 0, r.count, r.type, reference(r, c.size, 0, r.count), what);
    release(context, r);
  }
}

void reduce(Context& context, const Communicator& c) {
  const std::size_t count = context.fit(context.draw_count(), types().back(), 1);
  const int root = static_cast<int>(context.draw(static_cast<std::uint64_t>(c.size)));
  const bool in_place = context.draw(3) == 0 && c.rank == root;
  Reduction r = prepare(context, c, count, count, in_place);
  const std::string what = describe("MPI_Reduce", r, c) + " root " + std::to_string(root);
  context.expect_ok(
      MPI_Reduce(send_pointer(r), r.recv.data, static_cast<int>(count), r.type.type, r.op.op, root, c.comm),
      what);
  context.log.call("MPI_Reduce", bytes(r, count), c.rank == root ? bytes(r, count) : 0, location(r),
                   r.type.name, -1);
  if (c.rank == root) {
    expect_elements(context, r.recv, 0, count, r.type, reference(r, c.size, 0, count), what);
  }
  release(context, r);
}

void scan(Context& context, const Communicator& c) {
  const std::size_t count = context.fit(context.draw_count(), types().back(), 1);
  Reduction r = prepare(context, c, count, count, context.draw(3) == 0);
  const std::string what = describe("MPI_Scan", r, c);
  context.expect_ok(
      MPI_Scan(send_pointer(r), r.recv.data, static_cast<int>(count), r.type.type, r.op.op, c.comm), what);
  context.log.call("MPI_Scan", bytes(r, count), bytes(r, count), location(r), r.type.name, -1);
  expect_elements(context, r.recv, 0, count, r.type, reference(r, c.rank + 1, 0, count), what);
  release(context, r);
}

// MPI_Reduce_scatter_block, or MPI_Ireduce_scatter_block and its MPI_Wait.
void reduce_scatter_block_call(Context& context, const Communicator& c, bool nonblocking) {
  const char* const name = nonblocking ? "MPI_Ireduce_scatter_block" : "MPI_Reduce_scatter_block";
  const std::size_t block =
      context.fit(context.draw_count(), types().back(), static_cast<std::size_t>(c.size));
  const std::size_t total = block * static_cast<std::size_t>(c.size);
  Reduction r = prepare(context, c, total, total, context.draw(3) == 0);
  const std::string what = describe(name, r, c) + " block " + std::to_string(block);
  const int c_block = static_cast<int>(block);
  MPI_Request request = MPI_REQUEST_NULL;
  context.expect_ok(nonblocking ? MPI_Ireduce_scatter_block(send_pointer(r), r.recv.data, c_block,
                                                            r.type.type, r.op.op, c.comm, &request)
                                : MPI_Reduce_scatter_block(send_pointer(r), r.recv.data, c_block, r.type.type,
                                                           r.op.op, c.comm),
                    what);
  context.log.call(name, bytes(r, total), bytes(r, block), location(r), r.type.name, -1);
  if (nonblocking) {
    wait_collective(context, c, request, what);
  }
  const std::size_t first = block * static_cast<std::size_t>(c.rank);
  expect_elements(context, r.recv, 0, block, r.type, reference(r, c.size, first, block), what);
  release(context, r);
}

void reduce_scatter_block(Context& context, const Communicator& c) {
  reduce_scatter_block_call(context, c, false);
}

void ireduce_scatter_block(Context& context, const Communicator& c) {
  reduce_scatter_block_call(context, c, true);
}

// MPI_Ireduce_scatter and its MPI_Wait: uneven blocks, every third one empty.
void ireduce_scatter(Context& context, const Communicator& c) {
  const std::size_t n = static_cast<std::size_t>(c.size);
  const std::size_t base = context.fit(context.draw_count(), types().back(), 5 * n);
  std::vector<int> counts(n);
  for (int rank = 0; rank < c.size; ++rank) {
    counts[rank] = rank % 3 == 1 ? 0 : static_cast<int>(base + static_cast<std::size_t>(rank * 7 % 5));
  }
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  const std::size_t mine = static_cast<std::size_t>(counts[c.rank]);
  const std::size_t first = std::accumulate(counts.begin(), counts.begin() + c.rank, std::size_t{0});
  Reduction r = prepare(context, c, total, total, context.draw(3) == 0);
  const std::string what = describe("MPI_Ireduce_scatter", r, c) + " block " + std::to_string(mine);
  MPI_Request request = MPI_REQUEST_NULL;
  context.expect_ok(MPI_Ireduce_scatter(send_pointer(r), r.recv.data, counts.data(), r.type.type, r.op.op,
                                        c.comm, &request),
                    what);
  // The location of an in-place call's MPI_IN_PLACE is not checked (the spec names no in-place
  // buffer for the reduce-scatters with counts).
  context.log.call("MPI_Ireduce_scatter", bytes(r, total), bytes(r, mine),
                   r.in_place ? RowLog::kAny : location(r), r.type.name, -1);
  context.expect_ok(MPI_Wait(&request, MPI_STATUS_IGNORE), what + " (wait)");
  context.log.call("MPI_Wait");
  expect_elements(context, r.recv, 0, mine, r.type, reference(r, c.size, first, mine), what);
  release(context, r);
}

} // namespace

void add_reductions(std::vector<NamedOperation>& list) {
  list.insert(list.end(), {{"allreduce", allreduce},
                           {"allreduce", allreduce},
                           {"allreduce", allreduce},
                           {"iallreduce", iallreduce},
                           {"iallreduce_outstanding", iallreduce_outstanding},
                           {"reduce", reduce},
                           {"scan", scan},
                           {"reduce_scatter_block", reduce_scatter_block},
                           {"ireduce_scatter_block", ireduce_scatter_block},
                           {"ireduce_scatter", ireduce_scatter}});
}

} // namespace fuzz
