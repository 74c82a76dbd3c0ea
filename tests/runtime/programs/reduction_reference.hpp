#pragma once
// The host reference of the GPU correctness programs: the predefined reduction operations as MPI's
// C loops and the runtime's kernels compute them (promote, combine, truncate), and the hash the
// programs derive every rank's data from, so a result is checked against values computed here.
#include <mpi.h>

#include <cstdint>
#include <type_traits>

namespace commlens::reference {

enum class Op { Sum, Prod, Min, Max, Land, Lor, Lxor, Band, Bor, Bxor };
// Every predefined reduction, in the order above (the first four defined for every numeric type).
inline constexpr Op kAllOps[] = {Op::Sum, Op::Prod, Op::Min,  Op::Max, Op::Land,
                                 Op::Lor, Op::Lxor, Op::Band, Op::Bor, Op::Bxor};

inline MPI_Op mpi_op(Op op) {
  const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                        MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  return ops[static_cast<int>(op)];
}

// splitmix64's finaliser: well-spread values from (seed, rank, call, index).
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename T> T combine(Op op, T a, T b) {
  switch (op) {
  case Op::Sum:
    return T(a + b);
  case Op::Prod:
    return T(a * b);
  case Op::Min:
    return b < a ? b : a;
  case Op::Max:
    return a < b ? b : a;
  case Op::Land:
    return T((a != T(0)) && (b != T(0)));
  case Op::Lor:
    return T((a != T(0)) || (b != T(0)));
  case Op::Lxor:
    return T((a != T(0)) != (b != T(0)));
  default:
    break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
    case Op::Band:
      return T(a & b);
    case Op::Bor:
      return T(a | b);
    case Op::Bxor:
      return T(a ^ b);
    default:
      break;
    }
  }
  return a;
}

} // namespace commlens::reference
