#include "datatypes/datatype_runs.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

namespace commlens::runtime {

namespace {

// A datatype's constructor as MPI_Type_get_contents gives it back; the datatypes it names that
// are derived are new handles, freed with it.
struct Constructor {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addresses;
  std::vector<MPI_Datatype> types;

  explicit Constructor(MPI_Datatype datatype) {
    int int_count = 0;
    int address_count = 0;
    int type_count = 0;
    PMPI_Type_get_envelope(datatype, &int_count, &address_count, &type_count, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
      return;
    }
    ints.resize(static_cast<std::size_t>(int_count));
    addresses.resize(static_cast<std::size_t>(address_count));
    types.resize(static_cast<std::size_t>(type_count));
    PMPI_Type_get_contents(datatype, int_count, address_count, type_count, ints.data(), addresses.data(),
                           types.data());
  }
  Constructor(const Constructor&) = delete;
  Constructor& operator=(const Constructor&) = delete;
  ~Constructor() {
    for (MPI_Datatype& type : types) {
      if (!named(type)) {
        PMPI_Type_free(&type);
      }
    }
  }

  static bool named(MPI_Datatype datatype) {
    int int_count = 0;
    int address_count = 0;
    int type_count = 0;
    int type_combiner = MPI_COMBINER_NAMED;
    PMPI_Type_get_envelope(datatype, &int_count, &address_count, &type_count, &type_combiner);
    return type_combiner == MPI_COMBINER_NAMED;
  }
};

MPI_Aint extent_of(MPI_Datatype datatype) {
  MPI_Aint lower_bound = 0;
  MPI_Aint extent = 0;
  PMPI_Type_get_extent(datatype, &lower_bound, &extent);
  return extent;
}

// Runs appended in packing order, adjacent ones merged, at most max_runs.
class Runs {
public:
  explicit Runs(std::size_t max_runs) : max_runs_(max_runs) {}

  bool append(std::ptrdiff_t offset, std::size_t length) {
    if (length == 0) {
      return true;
    }
    if (!runs_.empty() && runs_.back().offset + static_cast<std::ptrdiff_t>(runs_.back().length) == offset) {
      runs_.back().length += length;
      return true;
    }
    if (runs_.size() == max_runs_) {
      return false;
    }
    runs_.push_back({offset, length});
    return true;
  }
  // Another datatype's runs, placed at `offset`.
  bool place(const std::vector<ByteRun>& inner, std::ptrdiff_t offset) {
    return std::all_of(inner.begin(), inner.end(),
                       [&](const ByteRun& run) { return append(offset + run.offset, run.length); });
  }
  std::vector<ByteRun> take() { return std::move(runs_); }

private:
  std::size_t max_runs_;
  std::vector<ByteRun> runs_;
};

std::optional<std::vector<ByteRun>> decode(MPI_Datatype datatype, std::size_t max_runs);

// `count` blocks of one element type; block(i) gives the block's displacement in bytes and its
// length in elements, which follow each other at the element's extent.
template <typename Block>
std::optional<std::vector<ByteRun>> blocks(MPI_Datatype element, int count, Block block,
                                           std::size_t max_runs) {
  const auto inner = decode(element, max_runs);
  if (!inner) {
    return std::nullopt;
  }
  const MPI_Aint extent = extent_of(element);
  Runs runs(max_runs);
  for (int index = 0; index < count; ++index) {
    const auto [displacement, length] = block(index);
    for (int item = 0; item < length; ++item) {
      if (!runs.place(*inner, displacement + item * extent)) {
        return std::nullopt;
      }
    }
  }
  return runs.take();
}

// Elements in MPI's order (the order argument's fastest dimension varies fastest).
std::optional<std::vector<ByteRun>> subarray(const Constructor& constructor, std::size_t max_runs) {
  const auto& ints = constructor.ints;
  const int dims = ints[0];
  const auto value = [&](int group, int dim) {
    return ints[static_cast<std::size_t>(1 + group * dims + dim)];
  };
  std::vector<int> slowest_first(static_cast<std::size_t>(dims));
  std::iota(slowest_first.begin(), slowest_first.end(), 0);
  if (ints[static_cast<std::size_t>(1 + 3 * dims)] == MPI_ORDER_FORTRAN) {
    std::reverse(slowest_first.begin(), slowest_first.end());
  }
  std::vector<MPI_Aint> stride(static_cast<std::size_t>(dims), 1); // in elements
  for (int position = dims - 2; position >= 0; --position) {
    const int faster = slowest_first[static_cast<std::size_t>(position + 1)];
    stride[static_cast<std::size_t>(slowest_first[static_cast<std::size_t>(position)])] =
        stride[static_cast<std::size_t>(faster)] * value(0, faster);
  }
  const auto inner = decode(constructor.types[0], max_runs);
  if (!inner) {
    return std::nullopt;
  }
  const MPI_Aint extent = extent_of(constructor.types[0]);
  Runs runs(max_runs);
  const std::function<bool(int, MPI_Aint)> walk = [&](int position, MPI_Aint element) {
    if (position == dims) {
      return runs.place(*inner, element * extent);
    }
    const int dim = slowest_first[static_cast<std::size_t>(position)];
    for (int index = 0; index < value(1, dim); ++index) {
      if (!walk(position + 1, element + (value(2, dim) + index) * stride[static_cast<std::size_t>(dim)])) {
        return false;
      }
    }
    return true;
  };
  return walk(0, 0) ? std::optional(runs.take()) : std::nullopt;
}

std::optional<std::vector<ByteRun>> decode(MPI_Datatype datatype, std::size_t max_runs) {
  const Constructor constructor(datatype);
  const auto& ints = constructor.ints;
  const auto& addresses = constructor.addresses;
  const auto at = [](const auto& values, int index) { return values[static_cast<std::size_t>(index)]; };
  switch (constructor.combiner) {
  case MPI_COMBINER_NAMED: {
    int size = 0;
    MPI_Aint true_lower_bound = 0;
    MPI_Aint true_extent = 0;
    PMPI_Type_size(datatype, &size);
    PMPI_Type_get_true_extent(datatype, &true_lower_bound, &true_extent);
    if (true_lower_bound != 0 || true_extent != size) {
      return std::nullopt; // a pair type with padding inside (MPI_SHORT_INT): where is not said
    }
    return std::vector<ByteRun>{{0, static_cast<std::size_t>(size)}};
  }
  case MPI_COMBINER_DUP:
  case MPI_COMBINER_RESIZED: // the same bytes; only the extent differs
    return decode(constructor.types[0], max_runs);
  case MPI_COMBINER_CONTIGUOUS:
    return blocks(
        constructor.types[0], 1,
        [&](int) {
          return std::pair<MPI_Aint, int>{0, ints[0]};
        },
        max_runs);
  case MPI_COMBINER_VECTOR:
  case MPI_COMBINER_HVECTOR: {
    const MPI_Aint stride = constructor.combiner == MPI_COMBINER_HVECTOR
                                ? addresses[0]
                                : static_cast<MPI_Aint>(ints[2]) * extent_of(constructor.types[0]);
    return blocks(
        constructor.types[0], ints[0],
        [&](int block) {
          return std::pair<MPI_Aint, int>{block * stride, ints[1]};
        },
        max_runs);
  }
  case MPI_COMBINER_INDEXED:
  case MPI_COMBINER_HINDEXED: {
    const MPI_Aint extent = extent_of(constructor.types[0]);
    const bool in_bytes = constructor.combiner == MPI_COMBINER_HINDEXED;
    return blocks(
        constructor.types[0], ints[0],
        [&](int block) {
          return std::pair<MPI_Aint, int>{
              in_bytes ? at(addresses, block) : at(ints, ints[0] + 1 + block) * extent, at(ints, 1 + block)};
        },
        max_runs);
  }
  case MPI_COMBINER_INDEXED_BLOCK:
  case MPI_COMBINER_HINDEXED_BLOCK: {
    const MPI_Aint extent = extent_of(constructor.types[0]);
    const bool in_bytes = constructor.combiner == MPI_COMBINER_HINDEXED_BLOCK;
    return blocks(
        constructor.types[0], ints[0],
        [&](int block) {
          return std::pair<MPI_Aint, int>{in_bytes ? at(addresses, block) : at(ints, 2 + block) * extent,
                                          ints[1]};
        },
        max_runs);
  }
  case MPI_COMBINER_STRUCT: {
    Runs runs(max_runs);
    for (int block = 0; block < ints[0]; ++block) {
      const MPI_Datatype type = at(constructor.types, block);
      const auto inner = decode(type, max_runs);
      const MPI_Aint extent = extent_of(type);
      for (int item = 0; item < at(ints, 1 + block); ++item) {
        if (!inner || !runs.place(*inner, at(addresses, block) + item * extent)) {
          return std::nullopt;
        }
      }
    }
    return runs.take();
  }
  case MPI_COMBINER_SUBARRAY:
    return subarray(constructor, max_runs);
  default: // darray, Fortran parameterised types: not decoded
    return std::nullopt;
  }
}

} // namespace

std::optional<std::vector<ByteRun>> datatype_runs(int count, MPI_Datatype datatype, std::size_t max_runs) {
  const auto one = decode(datatype, max_runs);
  if (!one) {
    return std::nullopt;
  }
  const MPI_Aint extent = extent_of(datatype);
  Runs runs(max_runs);
  for (int element = 0; element < count; ++element) {
    if (!runs.place(*one, element * extent)) {
      return std::nullopt;
    }
  }
  return runs.take();
}

std::vector<ByteRun> first_bytes(const std::vector<ByteRun>& runs, std::size_t bytes) {
  std::vector<ByteRun> first;
  for (const ByteRun& run : runs) {
    if (bytes == 0) {
      break;
    }
    first.push_back({run.offset, std::min(run.length, bytes)});
    bytes -= first.back().length;
  }
  return first;
}

} // namespace commlens::runtime
