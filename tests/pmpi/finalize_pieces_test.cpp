// The pieces of MPI_Finalize's tree (finalize_topology, clock_alignment, file_transfer,
// part_handover), under `mpirun -np 5`: offsets composed along the tree equal clocks set apart on
// purpose; the ranks of one host find offsets near zero and rank 0's rate; files of several chunks
// arrive byte for byte, and a file the sender cannot read aborts the stream with both ranks still
// in step; a handover survives its encoding and a damaged one is refused.
#include "clock_alignment.hpp"
#include "file_transfer.hpp"
#include "finalize_topology.hpp"
#include "part_handover.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace commlens::pmpi {
namespace {

namespace fs = std::filesystem;

int world_rank() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Each rank's clock runs `rank` seconds ahead of rank 0's: the tree must find exactly that, within
// the exchanges' own error (half a round trip per hop, far below a second).
TEST(ClockTree, OffsetsAddUpAlongTheTree) {
  const int rank = world_rank();
  const std::int64_t ahead = std::int64_t{rank} * 1'000'000'000;
  const std::int64_t offset = offset_along_tree(MPI_COMM_WORLD, [ahead] { return steady_ns() + ahead; });
  EXPECT_NEAR(static_cast<double>(offset), static_cast<double>(ahead), 20e6) << "rank " << rank;
}

TEST(ClockTree, RanksOfOneHostShareRankZerosTimelineAndRate) {
  const FinalizeTopology topology("."); // every rank of this test runs on this host
  const TickConverter clock;
  const ClockSample sample = measure_clock_offset(topology, clock, 10 + world_rank());
  EXPECT_EQ(sample.root_rate_ppb, 10);
  EXPECT_LT(std::abs(sample.offset_ns), 1'000'000) << "rank " << world_rank();
  if (world_rank() == 0) {
    EXPECT_EQ(sample.offset_ns, 0) << "rank 0's clock is the timeline's";
  }
}

std::string temporary(const std::string& name) {
  return (fs::path(testing::TempDir()) / (name + "-" + std::to_string(world_rank()))).string();
}

void write_file(const std::string& path, std::size_t bytes, char seed) {
  std::ofstream out(path, std::ios::binary);
  for (std::size_t index = 0; index < bytes; ++index)
    out.put(static_cast<char>(seed + index % 251));
}

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Rank 1 sends rank 0 an empty file, one of several chunks and a small one.
TEST(FileTransfer, FilesArriveWholeInChunks) {
  const std::vector<std::uint64_t> sizes{0, 2 * kTransferChunkBytes + 12345, 77};
  std::vector<std::string> paths;
  for (std::size_t file = 0; file < sizes.size(); ++file)
    paths.push_back(temporary("transfer-" + std::to_string(file)));
  std::string why;
  if (world_rank() == 1) {
    for (std::size_t file = 0; file < sizes.size(); ++file)
      write_file(paths[file], sizes[file], static_cast<char>('a' + file));
    EXPECT_TRUE(send_files(MPI_COMM_WORLD, 0, paths, sizes, why)) << why;
  } else if (world_rank() == 0) {
    ASSERT_TRUE(receive_files(MPI_COMM_WORLD, 1, paths, sizes, why)) << why;
    for (std::size_t file = 0; file < sizes.size(); ++file) {
      const std::string expected = paths[file] + "-expected";
      write_file(expected, sizes[file], static_cast<char>('a' + file));
      EXPECT_EQ(contents(paths[file]), contents(expected)) << file;
    }
  }
  PMPI_Barrier(MPI_COMM_WORLD);
}

// The second file is not there: the sender says so after the first, the receiver drops both.
TEST(FileTransfer, AFileTheSenderCannotReadAbortsTheStream) {
  const std::vector<std::uint64_t> sizes{kTransferChunkBytes + 1, 100};
  const std::vector<std::string> paths{temporary("abort-0"), temporary("abort-missing")};
  std::string why;
  if (world_rank() == 1) {
    write_file(paths[0], sizes[0], 'x');
    std::remove(paths[1].c_str());
    EXPECT_FALSE(send_files(MPI_COMM_WORLD, 0, paths, sizes, why));
    EXPECT_NE(why.find(paths[1]), std::string::npos) << why;
  } else if (world_rank() == 0) {
    EXPECT_FALSE(receive_files(MPI_COMM_WORLD, 1, paths, sizes, why));
    EXPECT_FALSE(fs::exists(paths[0]));
  }
  // Both ranks are in step: a message sent now is the next one received.
  int token = world_rank() == 1 ? 42 : 0;
  if (world_rank() == 1)
    PMPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  else if (world_rank() == 0)
    PMPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  EXPECT_EQ(token, world_rank() <= 1 ? 42 : 0);
}

TEST(PartHandover, ComesBackAsItWasSent) {
  const PartHandover sent{true,
                          false,
                          {"commlens-part-00004.sqlite", "rank-00004.sqlite-pages"},
                          {4096, 123456789012},
                          {{{4, 5, 6}, "node2:/scratch/out"}, {{8}, "node3:/scratch/out"}},
                          {{{8}, "node3:/scratch/out"}}};
  const PartHandover got = decode_handover(encode_handover(sent));
  EXPECT_EQ(got.made, sent.made);
  EXPECT_EQ(got.in_place, sent.in_place);
  EXPECT_EQ(got.files, sent.files);
  EXPECT_EQ(got.sizes, sent.sizes);
  ASSERT_EQ(got.ranks.size(), 2u);
  EXPECT_EQ(got.ranks[0].ranks, (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(got.ranks[1].place, "node3:/scratch/out");
  ASSERT_EQ(got.remote.size(), 1u);
  EXPECT_EQ(got.remote[0].ranks, (std::vector<int>{8}));
}

TEST(PartHandover, ACutMessageIsRefused) {
  std::vector<std::uint8_t> bytes =
      encode_handover(PartHandover{true, true, {"part"}, {1}, {{{1}, "a:/b"}}, {}});
  bytes.resize(bytes.size() - 3);
  EXPECT_THROW(decode_handover(bytes), std::runtime_error);
}

} // namespace
} // namespace commlens::pmpi
