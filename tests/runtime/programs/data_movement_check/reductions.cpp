// MPI_Reduce_scatter_block and MPI_Reduce_scatter of data_movement_check (checker.hpp): small
// integer values, so that the reference's order of reduction gives the same bits as any other.
#include "checker.hpp"

namespace data_movement_check {

namespace {

// Rank `owner`'s element i of a call: 0..3 unsigned (0..1 for logical ops), -3..3 signed.
template <typename T> T value(std::uint64_t hash, Op op) {
  if (op == Op::Land || op == Op::Lor || op == Op::Lxor) {
    return static_cast<T>(hash % 2);
  }
  if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(hash % 4);
  } else {
    return static_cast<T>(static_cast<int>(hash % 7) - 3);
  }
}

} // namespace

template <typename T>
void Checker::reduce_scatter(MPI_Datatype type, Op op, std::size_t count, bool blocks, bool in_place) {
  ++call_;
  std::vector<int> counts(static_cast<std::size_t>(size_));
  for (int rank = 0; rank < size_; ++rank) {
    // Unequal counts, some zero for small ones: slices of every length, empty ones too.
    counts[static_cast<std::size_t>(rank)] =
        blocks ? static_cast<int>(count) : std::max(0, static_cast<int>(count) + rank % 3 - 1);
  }
  std::size_t total = 0;
  std::size_t first = 0;
  for (int rank = 0; rank < size_; ++rank) {
    first += rank < rank_ ? static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]) : 0;
    total += static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]);
  }
  const auto element = [&](int owner, std::size_t i) {
    return value<T>(mix(seed_ ^ (call_ << 40) ^ (static_cast<std::uint64_t>(owner) << 32) ^ i), op);
  };
  Buffer send(total * sizeof(T), false);
  const std::size_t mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(rank_)]);
  Buffer receive(in_place ? total * sizeof(T) : mine * sizeof(T), false);
  Buffer& input = in_place ? receive : send;
  for (std::size_t i = 0; i < total; ++i) {
    const T x = element(rank_, i);
    std::memcpy(input.image.data() + i * sizeof(T), &x, sizeof(T));
  }
  input.upload();
  char name[64];
  int length = 0;
  MPI_Type_get_name(type, name, &length);
  const std::string what = std::string(blocks ? "MPI_Reduce_scatter_block " : "MPI_Reduce_scatter ") + name +
                           " op " + std::to_string(static_cast<int>(op)) + " count " + std::to_string(count) +
                           (in_place ? " in place" : "") + " on " + std::to_string(size_) + " ranks";
  const void* sendbuf = in_place ? MPI_IN_PLACE : send.data;
  check(blocks ? MPI_Reduce_scatter_block(sendbuf, receive.data, static_cast<int>(count), type, mpi_op(op),
                                          comm_)
               : MPI_Reduce_scatter(sendbuf, receive.data, counts.data(), type, mpi_op(op), comm_),
        what);
  std::vector<unsigned char> expected(mine * sizeof(T));
  for (std::size_t k = 0; k < mine; ++k) {
    T result = element(0, first + k);
    for (int source = 1; source < size_; ++source) {
      result = combine(op, result, element(source, first + k));
    }
    std::memcpy(expected.data() + k * sizeof(T), &result, sizeof(T));
  }
  expect(receive, expected, expected.size(), what);
  counted(!in_place && total > 0);
}

template <typename T> void every_op(Checker& check, MPI_Datatype type, std::size_t count, bool blocks) {
  const Op arithmetic[] = {Op::Sum, Op::Prod, Op::Min, Op::Max};
  const Op bitwise[] = {Op::Band, Op::Bor, Op::Bxor, Op::Land, Op::Lor, Op::Lxor};
  for (const Op op : arithmetic) {
    check.reduce_scatter<T>(type, op, count, blocks, false);
  }
  if constexpr (std::is_integral_v<T>) {
    for (const Op op : bitwise) {
      check.reduce_scatter<T>(type, op, count, blocks, false);
    }
  }
}

void every_reduction(Checker& check, std::size_t count, bool blocks) {
  every_op<std::int8_t>(check, MPI_SIGNED_CHAR, count, blocks);
  every_op<std::uint8_t>(check, MPI_UNSIGNED_CHAR, count, blocks);
  every_op<std::int16_t>(check, MPI_SHORT, count, blocks);
  every_op<std::uint16_t>(check, MPI_UNSIGNED_SHORT, count, blocks);
  every_op<std::int32_t>(check, MPI_INT, count, blocks);
  every_op<std::uint32_t>(check, MPI_UNSIGNED, count, blocks);
  every_op<long>(check, MPI_LONG, count, blocks);
  every_op<unsigned long>(check, MPI_UNSIGNED_LONG, count, blocks);
  every_op<std::int64_t>(check, MPI_INT64_T, count, blocks);
  every_op<float>(check, MPI_FLOAT, count, blocks);
  every_op<double>(check, MPI_DOUBLE, count, blocks);
  for (const Op op : {Op::Land, Op::Lor, Op::Lxor}) {
    check.reduce_scatter<std::uint8_t>(MPI_C_BOOL, op, count, blocks, false);
  }
}

template void Checker::reduce_scatter<float>(MPI_Datatype, Op, std::size_t, bool, bool);
template void Checker::reduce_scatter<double>(MPI_Datatype, Op, std::size_t, bool, bool);
template void Checker::reduce_scatter<std::int32_t>(MPI_Datatype, Op, std::size_t, bool, bool);

} // namespace data_movement_check
