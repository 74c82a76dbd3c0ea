#include "fuzz_context.hpp"

#include "fuzz_operations.hpp"

#include <algorithm>

namespace fuzz {

void RowLog::call(const char* function, long long sent, long long received, int location,
                  const char* datatype, long long peer) {
  if (file_ != nullptr) {
    std::fprintf(file_, "%s\t%lld\t%lld\t%d\t%s\t%lld\n", function, sent, received, location, datatype, peer);
  }
}

std::size_t Context::draw_count() {
  // The smaller of two exponents: half the calls are below 2^(max/3) or so, a few are huge.
  const auto exponent = std::min(draw(max_log2_count + 1), draw(max_log2_count + 1));
  const std::size_t span = std::size_t{1} << exponent;
  return (1 + static_cast<std::size_t>(draw(span))) | (draw(2) == 0 ? 1 : 0);
}

const TypeInfo& Context::draw_type() {
  return types()[draw(types().size())];
}

const OpInfo& Context::draw_op(const TypeInfo& type) {
  std::vector<const OpInfo*> applicable;
  for (const OpInfo& op : ops()) {
    if (op_applies(op, type)) {
      applicable.push_back(&op);
    }
  }
  return *applicable[draw(applicable.size())];
}

std::size_t Context::fit(std::size_t count, const TypeInfo& type, std::size_t parts) const {
  constexpr std::size_t kMaxBufferBytes = std::size_t{256} << 20;
  const std::size_t most =
      kMaxBufferBytes / (static_cast<std::size_t>(type.size) * std::max<std::size_t>(parts, 1));
  return std::max<std::size_t>(1, std::min(count, most));
}

void Context::mismatch(const std::string& what, long long element) {
  ++mismatches;
  std::printf("runtime_fuzz: MISMATCH seed %llu step %ld rank %d: %s (first wrong element %lld)\n",
              static_cast<unsigned long long>(seed), step, world_rank, what.c_str(), element);
  std::fflush(stdout);
}

void Context::expect_ok(int rc, const std::string& what) {
  if (rc != MPI_SUCCESS) {
    mismatch(what + ": returned " + std::to_string(rc), -1);
  }
}

std::vector<char> host_fill(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int rank, std::size_t first,
                            std::size_t count) {
  std::vector<char> data(count * static_cast<std::size_t>(type.size));
  fill(type, op, salt, rank, first, count, data.data());
  return data;
}

void wait_collective(Context& context, const Communicator& c, MPI_Request& request, const std::string& what) {
  const bool progress_rule = context.draw(4) == 0 && c.size > 1;
  constexpr int kProgressTag = 77;
  int token = 0;
  if (progress_rule && c.rank == 0) {
    context.expect_ok(MPI_Recv(&token, 1, MPI_INT, c.size - 1, kProgressTag, c.comm, MPI_STATUS_IGNORE),
                      what + " (receive before the wait)");
    context.log.call("MPI_Recv");
  }
  context.expect_ok(MPI_Wait(&request, MPI_STATUS_IGNORE), what + " (wait)");
  context.log.call("MPI_Wait");
  if (progress_rule && c.rank == c.size - 1) {
    context.expect_ok(MPI_Send(&token, 1, MPI_INT, 0, kProgressTag, c.comm), what + " (send after the wait)");
    context.log.call("MPI_Send");
  }
}

void expect_elements(Context& context, const Buffer& buffer, std::size_t first, std::size_t count,
                     const TypeInfo& type, const std::vector<char>& expected, const std::string& what) {
  std::vector<char> got(count * static_cast<std::size_t>(type.size));
  BufferFactory::read(buffer, first * static_cast<std::size_t>(type.size), got.data(), got.size());
  const long long wrong = first_difference(got.data(), expected.data(), count, type.size);
  if (wrong >= 0) {
    context.mismatch(what, wrong);
  }
}

const std::vector<NamedOperation>& operations() {
  static const std::vector<NamedOperation> list = [] {
    std::vector<NamedOperation> all;
    add_reductions(all);
    add_data_movement(all);
    add_point_to_point(all);
    return all;
  }();
  return list;
}

} // namespace fuzz
