// The bytes a (count, datatype) message touches, decoded from the datatype's constructors, checked
// against MPI itself: unpacking a stream of 0xFF bytes with the datatype marks exactly the bytes
// it touches. Also the packing order (the first bytes of a partial receive), the types that are
// not decoded, and the cap on runs. Host-only, runs without a GPU.
#include "datatypes/datatype_runs.hpp"
#include "datatypes/message_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace commlens::runtime {
namespace {

// The touched bytes as MPI_Unpack writes them, as sorted maximal runs.
std::vector<ByteRun> runs_by_unpacking(int count, MPI_Datatype datatype) {
  const MessageLayout layout = message_layout(count, datatype);
  std::vector<unsigned char> marks(layout.span, 0);
  std::vector<unsigned char> stream(layout.bytes, 0xFF);
  int position = 0;
  MPI_Unpack(stream.data(), static_cast<int>(stream.size()), &position, marks.data() - layout.span_start,
             count, datatype, MPI_COMM_SELF);
  std::vector<ByteRun> runs;
  for (std::size_t i = 0; i < marks.size(); ++i) {
    if (marks[i] == 0) {
      continue;
    }
    const std::ptrdiff_t offset = static_cast<std::ptrdiff_t>(i) + layout.span_start;
    if (!runs.empty() && runs.back().offset + static_cast<std::ptrdiff_t>(runs.back().length) == offset) {
      ++runs.back().length;
    } else {
      runs.push_back({offset, 1});
    }
  }
  return runs;
}

std::vector<ByteRun> sorted_and_merged(std::vector<ByteRun> runs) {
  std::sort(runs.begin(), runs.end(), [](const ByteRun& a, const ByteRun& b) { return a.offset < b.offset; });
  std::vector<ByteRun> merged;
  for (const ByteRun& run : runs) {
    if (!merged.empty() &&
        merged.back().offset + static_cast<std::ptrdiff_t>(merged.back().length) == run.offset) {
      merged.back().length += run.length;
    } else {
      merged.push_back(run);
    }
  }
  return merged;
}

std::size_t total(const std::vector<ByteRun>& runs) {
  std::size_t bytes = 0;
  for (const ByteRun& run : runs) {
    bytes += run.length;
  }
  return bytes;
}

// Decoded runs cover exactly MPI's bytes, once each.
void expect_same_bytes_as_mpi(int count, MPI_Datatype datatype, const std::string& name) {
  const auto decoded = datatype_runs(count, datatype, 1u << 20);
  ASSERT_TRUE(decoded) << name;
  EXPECT_EQ(total(*decoded), message_layout(count, datatype).bytes) << name << ": each byte once";
  EXPECT_EQ(sorted_and_merged(*decoded), runs_by_unpacking(count, datatype)) << name;
}

class Datatype {
public:
  explicit Datatype(MPI_Datatype type) : type_(type) { MPI_Type_commit(&type_); }
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;
  ~Datatype() { MPI_Type_free(&type_); }
  operator MPI_Datatype() const { return type_; }

private:
  MPI_Datatype type_;
};

template <typename Make> MPI_Datatype made(Make make) {
  MPI_Datatype type;
  make(&type);
  return type;
}

TEST(DatatypeRuns, EveryDecodedConstructorTouchesExactlyWhatMpiUnpacks) {
  const Datatype vector(made([](MPI_Datatype* t) { MPI_Type_vector(5, 2, 3, MPI_INT, t); }));
  expect_same_bytes_as_mpi(3, vector, "vector x3");
  const Datatype hvector(made([](MPI_Datatype* t) { MPI_Type_create_hvector(4, 1, 24, MPI_DOUBLE, t); }));
  expect_same_bytes_as_mpi(2, hvector, "hvector x2");
  const int lengths[] = {2, 1, 3};
  const int displacements[] = {0, 5, 9};
  const Datatype indexed(
      made([&](MPI_Datatype* t) { MPI_Type_indexed(3, lengths, displacements, MPI_SHORT, t); }));
  expect_same_bytes_as_mpi(2, indexed, "indexed x2");
  const MPI_Aint byte_displacements[] = {40, 0, 17};
  const Datatype hindexed(
      made([&](MPI_Datatype* t) { MPI_Type_create_hindexed(3, lengths, byte_displacements, MPI_CHAR, t); }));
  expect_same_bytes_as_mpi(1, hindexed, "hindexed (out of order)");
  const Datatype indexed_block(
      made([&](MPI_Datatype* t) { MPI_Type_create_indexed_block(3, 2, displacements, MPI_FLOAT, t); }));
  expect_same_bytes_as_mpi(3, indexed_block, "indexed_block x3");
  const Datatype hindexed_block(
      made([&](MPI_Datatype* t) { MPI_Type_create_hindexed_block(3, 1, byte_displacements, MPI_INT, t); }));
  expect_same_bytes_as_mpi(1, hindexed_block, "hindexed_block");
  const int struct_lengths[] = {1, 2, 3};
  const MPI_Aint struct_displacements[] = {0, 8, 28};
  const MPI_Datatype struct_types[] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  const Datatype record(made([&](MPI_Datatype* t) {
    MPI_Type_create_struct(3, struct_lengths, struct_displacements, struct_types, t);
  }));
  expect_same_bytes_as_mpi(4, record, "struct x4 (padding between records)");
  const int sizes[] = {6, 5, 4};
  const int subsizes[] = {2, 3, 2};
  const int starts[] = {1, 1, 1};
  const Datatype c_block(made([&](MPI_Datatype* t) {
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, t);
  }));
  expect_same_bytes_as_mpi(1, c_block, "subarray C order");
  const Datatype fortran_block(made([&](MPI_Datatype* t) {
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_FLOAT, t);
  }));
  expect_same_bytes_as_mpi(2, fortran_block, "subarray Fortran order x2");
  const Datatype resized(made([&](MPI_Datatype* t) { MPI_Type_create_resized(vector, -8, 100, t); }));
  expect_same_bytes_as_mpi(3, resized, "resized vector x3 (negative lower bound)");
  const Datatype vector_of_records(made([&](MPI_Datatype* t) { MPI_Type_vector(3, 2, 4, record, t); }));
  expect_same_bytes_as_mpi(2, vector_of_records, "vector of structs x2");
  const Datatype contiguous_vectors(made([&](MPI_Datatype* t) { MPI_Type_contiguous(3, vector, t); }));
  expect_same_bytes_as_mpi(1, contiguous_vectors, "contiguous of vectors");
  const Datatype duplicate(made([&](MPI_Datatype* t) { MPI_Type_dup(indexed_block, t); }));
  expect_same_bytes_as_mpi(2, duplicate, "dup");
  expect_same_bytes_as_mpi(7, MPI_DOUBLE, "predefined");
  expect_same_bytes_as_mpi(2, MPI_DOUBLE_INT, "pair type without inner padding");
}

TEST(DatatypeRuns, RunsFollowPackingOrderSoAPartialReceiveKnowsItsFirstBytes) {
  const MPI_Aint displacements[] = {40, 0, 17};
  const int lengths[] = {2, 1, 3};
  const Datatype hindexed(
      made([&](MPI_Datatype* t) { MPI_Type_create_hindexed(3, lengths, displacements, MPI_CHAR, t); }));
  const auto runs = datatype_runs(1, hindexed, 100);
  ASSERT_TRUE(runs);
  EXPECT_EQ(*runs, (std::vector<ByteRun>{{40, 2}, {0, 1}, {17, 3}}));
  EXPECT_EQ(first_bytes(*runs, 4), (std::vector<ByteRun>{{40, 2}, {0, 1}, {17, 1}}));
  EXPECT_EQ(first_bytes(*runs, 0), std::vector<ByteRun>{});
  EXPECT_EQ(first_bytes(*runs, 99), *runs);
}

TEST(DatatypeRuns, UndecodableTypesAndTooManyRunsAreSaid) {
  EXPECT_FALSE(datatype_runs(1, MPI_SHORT_INT, 100)) << "padding inside a predefined pair type";
  const int sizes[] = {8};
  const int distribs[] = {MPI_DISTRIBUTE_BLOCK};
  const int dargs[] = {MPI_DISTRIBUTE_DFLT_DARG};
  const int processes[] = {2};
  const Datatype darray(made([&](MPI_Datatype* t) {
    MPI_Type_create_darray(2, 1, 1, sizes, distribs, dargs, processes, MPI_ORDER_C, MPI_INT, t);
  }));
  EXPECT_FALSE(datatype_runs(1, darray, 100));
  const Datatype every_other(made([](MPI_Datatype* t) { MPI_Type_vector(1000, 1, 2, MPI_INT, t); }));
  EXPECT_FALSE(datatype_runs(1, every_other, 999)) << "1000 runs";
  EXPECT_EQ(datatype_runs(1, every_other, 1000)->size(), 1000u);
  const Datatype two_ints(made([](MPI_Datatype* t) { MPI_Type_contiguous(2, MPI_INT, t); }));
  EXPECT_EQ(*datatype_runs(1000, two_ints, 1), (std::vector<ByteRun>{{0, 8000}})) << "adjacent runs merge";
}

} // namespace
} // namespace commlens::runtime
