#pragma once
// The runtime fuzzer's data: the predefined types and reduction ops it draws, the element every
// rank puts at every index (so each rank computes every other rank's input and the reference
// result on the host), and the reduction of those on the host, element by element.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace fuzz {

enum class Kind { Signed, Unsigned, Floating, Pair };

struct TypeInfo {
  MPI_Datatype type;
  const char* name;
  int size;
  Kind kind;
};

struct OpInfo {
  MPI_Op op;
  const char* name;
  bool integers_only; // bitwise and logical ops
  bool pairs_only;    // MAXLOC, MINLOC
};

std::span<const TypeInfo> types();
std::span<const OpInfo> ops();
bool op_applies(const OpInfo& op, const TypeInfo& type);

// Small integers (exact in every floating type, so floating results are compared bitwise too);
// mostly ones for MPI_PROD so products stay small. `salt` differs per call.
void fill(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int rank, std::size_t first, std::size_t count,
          char* out);
// The reduction over ranks 0..ranks-1 of their fill() at elements first..first+count-1.
void reduce_reference(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int ranks, std::size_t first,
                      std::size_t count, char* out);
// Index of the first element that differs bitwise; -1 when none.
long long first_difference(const char* got, const char* expected, std::size_t count, int element_size);

} // namespace fuzz
