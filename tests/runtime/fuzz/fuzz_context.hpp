#pragma once
// What every fuzzed operation shares: the communicators, the random streams (the call sequence,
// equal on every rank; the allocation choices, per rank), the buffers, the log of the rows the
// profiler must store for each call, and the mismatch count.
#include "fuzz_memory.hpp"
#include "fuzz_values.hpp"

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace fuzz {

struct Communicator {
  MPI_Comm comm;
  const char* name;
  int rank;
  int size;
  std::vector<int> world_ranks; // of each rank of comm
};

// One line per MPI call the program makes, in order: what mpi_calls must hold for it (check_rows.py
// compares). -2 means "not checked".
class RowLog {
public:
  static constexpr long long kAny = -2;
  explicit RowLog(std::FILE* file) : file_(file) {}
  void call(const char* function, long long sent = kAny, long long received = kAny, int location = kAny,
            const char* datatype = "*", long long peer = kAny);

private:
  std::FILE* file_;
};

struct Context {
  int world_rank = 0;
  std::uint64_t seed = 0;
  std::mt19937_64 sequence; // equal on every rank: which call, type, op, count, root
  BufferFactory& buffers;   // per rank: which memory
  RowLog& log;
  std::vector<Communicator> comms{};
  int max_log2_count = 20;
  long step = 0;
  long mismatches = 0;
  std::map<std::string, long> calls{}; // per operation, for the summary line

  std::uint64_t draw(std::uint64_t bound) { return sequence() % bound; }
  // Counts from 1 to 2^max_log2_count, small ones most often, odd ones often.
  std::size_t draw_count();
  const TypeInfo& draw_type();
  // An op that applies to the type.
  const OpInfo& draw_op(const TypeInfo& type);
  // The number of elements of `type` a buffer of this rank may hold at most (bytes bound).
  std::size_t fit(std::size_t count, const TypeInfo& type, std::size_t parts) const;

  // Prints the mismatch with everything needed to find it again; counts it.
  void mismatch(const std::string& what, long long element);
  // A call that returned an error is a mismatch too.
  void expect_ok(int rc, const std::string& what);
};

// The operations, each one call (or one exchange) on `comm` with its check.
using Operation = void (*)(Context&, const Communicator&);
struct NamedOperation {
  const char* name;
  Operation run;
};
const std::vector<NamedOperation>& operations();

// MPI_Wait for a nonblocking collective posted on `c`, logged. One time in four (drawn alike on
// every rank) under MPI's progress rule: c's rank 0 first blocks in MPI_Recv of a message c's last
// rank sends only once its own wait returned, so the runtime must finish the call without rank
// 0's thread (a hang: it left a call its ranks declined in its job to rank 0's next MPI call).
void wait_collective(Context& context, const Communicator& c, MPI_Request& request, const std::string& what);

// Host images of what each rank sent, to compare buffers against.
std::vector<char> host_fill(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int rank, std::size_t first,
                            std::size_t count);
// Reads `count` elements at element offset `first` of the buffer and compares them with
// `expected`; reports the first difference as a mismatch of `what`.
void expect_elements(Context& context, const Buffer& buffer, std::size_t first, std::size_t count,
                     const TypeInfo& type, const std::vector<char>& expected, const std::string& what);

} // namespace fuzz
