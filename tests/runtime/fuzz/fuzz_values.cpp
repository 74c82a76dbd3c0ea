#include "fuzz_values.hpp"

#include <algorithm>
#include <array>

namespace fuzz {

namespace {

struct IntPair {
  int value;
  int index;
};

const std::array kTypes = {
    TypeInfo{MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, Kind::Signed},
    TypeInfo{MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, Kind::Unsigned},
    TypeInfo{MPI_SHORT, "MPI_SHORT", 2, Kind::Signed},
    TypeInfo{MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, Kind::Unsigned},
    TypeInfo{MPI_INT, "MPI_INT", 4, Kind::Signed},
    TypeInfo{MPI_UNSIGNED, "MPI_UNSIGNED", 4, Kind::Unsigned},
    TypeInfo{MPI_LONG, "MPI_LONG", 8, Kind::Signed},
    TypeInfo{MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, Kind::Unsigned},
    TypeInfo{MPI_LONG_LONG, "MPI_LONG_LONG", 8, Kind::Signed},
    TypeInfo{MPI_INT8_T, "MPI_INT8_T", 1, Kind::Signed},
    TypeInfo{MPI_UINT16_T, "MPI_UINT16_T", 2, Kind::Unsigned},
    TypeInfo{MPI_INT32_T, "MPI_INT32_T", 4, Kind::Signed},
    TypeInfo{MPI_UINT64_T, "MPI_UINT64_T", 8, Kind::Unsigned},
    TypeInfo{MPI_FLOAT, "MPI_FLOAT", 4, Kind::Floating},
    TypeInfo{MPI_DOUBLE, "MPI_DOUBLE", 8, Kind::Floating},
    TypeInfo{MPI_2INT, "MPI_2INT", 8, Kind::Pair},
};

const std::array kOps = {
    OpInfo{MPI_SUM, "MPI_SUM", false, false},      OpInfo{MPI_PROD, "MPI_PROD", false, false},
    OpInfo{MPI_MAX, "MPI_MAX", false, false},      OpInfo{MPI_MIN, "MPI_MIN", false, false},
    OpInfo{MPI_LAND, "MPI_LAND", true, false},     OpInfo{MPI_LOR, "MPI_LOR", true, false},
    OpInfo{MPI_LXOR, "MPI_LXOR", true, false},     OpInfo{MPI_BAND, "MPI_BAND", true, false},
    OpInfo{MPI_BOR, "MPI_BOR", true, false},       OpInfo{MPI_BXOR, "MPI_BXOR", true, false},
    OpInfo{MPI_MAXLOC, "MPI_MAXLOC", false, true}, OpInfo{MPI_MINLOC, "MPI_MINLOC", false, true},
};

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// The integer every rank holds at an index, before conversion to the type. No result of a
// one-byte type overflows: C leaves signed overflow undefined, and MPI libraries differ there (Open
// MPI 4.1's in-place MPI_SUM of MPI_INT8_T does not wrap); wider types never come near it.
long long small_value(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int rank, std::size_t index) {
  const std::uint64_t h = mix(salt ^ mix(static_cast<std::uint64_t>(rank) * 0x9e3779b97f4a7c15ULL + index));
  const bool narrow = type.size == 1;
  if (op == MPI_PROD) {
    if (h % 7 != 0) {
      return 1;
    }
    return narrow ? (type.kind == Kind::Signed ? -1 : 0) : 2;
  }
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) {
    return static_cast<long long>(h % 3 == 0 ? 0 : h % 5);
  }
  return static_cast<long long>(h % (narrow ? 16 : 61)); // at most 15 x 8 ranks in one byte
}

template <typename T> T combine(MPI_Op op, T a, T b) {
  if (op == MPI_SUM)
    return static_cast<T>(a + b);
  if (op == MPI_PROD)
    return static_cast<T>(a * b);
  if (op == MPI_MAX)
    return std::max(a, b);
  if (op == MPI_MIN)
    return std::min(a, b);
  if constexpr (std::is_integral_v<T>) {
    if (op == MPI_LAND)
      return static_cast<T>((a != 0) && (b != 0));
    if (op == MPI_LOR)
      return static_cast<T>((a != 0) || (b != 0));
    if (op == MPI_LXOR)
      return static_cast<T>((a != 0) != (b != 0));
    if (op == MPI_BAND)
      return static_cast<T>(a & b);
    if (op == MPI_BOR)
      return static_cast<T>(a | b);
    if (op == MPI_BXOR)
      return static_cast<T>(a ^ b);
  }
  return a;
}

template <typename T>
void fill_as(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int rank, std::size_t first,
             std::size_t count, char* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const T value = static_cast<T>(small_value(type, op, salt, rank, first + i));
    std::memcpy(out + i * sizeof(T), &value, sizeof(T));
  }
}

template <typename T>
void reduce_as(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int ranks, std::size_t first,
               std::size_t count, char* out) {
  for (std::size_t i = 0; i < count; ++i) {
    T result = static_cast<T>(small_value(type, op, salt, 0, first + i));
    for (int rank = 1; rank < ranks; ++rank) {
      result = combine(op, result, static_cast<T>(small_value(type, op, salt, rank, first + i)));
    }
    std::memcpy(out + i * sizeof(T), &result, sizeof(T));
  }
}

// MPI_2INT: (value, rank) pairs; MAXLOC/MINLOC keep the extreme value and the lowest index.
void fill_pairs(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int rank, std::size_t first,
                std::size_t count, char* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const IntPair pair{static_cast<int>(small_value(type, op, salt, rank, first + i) % 5), rank};
    std::memcpy(out + i * sizeof(IntPair), &pair, sizeof(IntPair));
  }
}

void reduce_pairs(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int ranks, std::size_t first,
                  std::size_t count, char* out) {
  for (std::size_t i = 0; i < count; ++i) {
    IntPair best{static_cast<int>(small_value(type, op, salt, 0, first + i) % 5), 0};
    for (int rank = 1; rank < ranks; ++rank) {
      const int value = static_cast<int>(small_value(type, op, salt, rank, first + i) % 5);
      if (op == MPI_MAXLOC ? value > best.value : value < best.value) {
        best = {value, rank};
      }
    }
    std::memcpy(out + i * sizeof(IntPair), &best, sizeof(IntPair));
  }
}

template <typename Visitor> void visit(const TypeInfo& type, Visitor&& visitor) {
  const MPI_Datatype t = type.type;
  if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T)
    return visitor(std::int8_t{});
  if (t == MPI_UNSIGNED_CHAR)
    return visitor(std::uint8_t{});
  if (t == MPI_SHORT)
    return visitor(std::int16_t{});
  if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T)
    return visitor(std::uint16_t{});
  if (t == MPI_INT || t == MPI_INT32_T)
    return visitor(std::int32_t{});
  if (t == MPI_UNSIGNED)
    return visitor(std::uint32_t{});
  if (t == MPI_LONG || t == MPI_LONG_LONG)
    return visitor(std::int64_t{});
  if (t == MPI_UNSIGNED_LONG || t == MPI_UINT64_T)
    return visitor(std::uint64_t{});
  if (t == MPI_FLOAT)
    return visitor(float{});
  return visitor(double{});
}

} // namespace

std::span<const TypeInfo> types() {
  return kTypes;
}

std::span<const OpInfo> ops() {
  return kOps;
}

bool op_applies(const OpInfo& op, const TypeInfo& type) {
  if (type.kind == Kind::Pair || op.pairs_only) {
    return type.kind == Kind::Pair && op.pairs_only;
  }
  return !op.integers_only || type.kind != Kind::Floating;
}

void fill(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int rank, std::size_t first, std::size_t count,
          char* out) {
  if (type.kind == Kind::Pair) {
    return fill_pairs(type, op, salt, rank, first, count, out);
  }
  visit(type, [&](auto tag) { fill_as<decltype(tag)>(type, op, salt, rank, first, count, out); });
}

void reduce_reference(const TypeInfo& type, MPI_Op op, std::uint64_t salt, int ranks, std::size_t first,
                      std::size_t count, char* out) {
  if (type.kind == Kind::Pair) {
    return reduce_pairs(type, op, salt, ranks, first, count, out);
  }
  visit(type, [&](auto tag) { reduce_as<decltype(tag)>(type, op, salt, ranks, first, count, out); });
}

long long first_difference(const char* got, const char* expected, std::size_t count, int element_size) {
  const std::size_t bytes = count * static_cast<std::size_t>(element_size);
  if (std::memcmp(got, expected, bytes) == 0) {
    return -1;
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(got + i * element_size, expected + i * element_size, element_size) != 0) {
      return static_cast<long long>(i);
    }
  }
  return -1;
}

} // namespace fuzz
