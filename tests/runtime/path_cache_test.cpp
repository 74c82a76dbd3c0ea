// The runtime's per-node file of measured copy paths, without a GPU: what is stored is read back,
// entries of other GPUs survive, a different GPU model or driver means measuring again, a damaged
// file is said and replaced, and concurrent writers (the GPUs of a node) lose nothing.
#include "path_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace commlens::runtime::topology;
namespace fs = std::filesystem;

class PathCache : public ::testing::Test {
protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("commlens_path_cache_" + std::to_string(::getpid()));
    fs::remove_all(directory_);
    file_ = directory_ / "nested" / "paths-node1.json";
  }
  void TearDown() override { fs::remove_all(directory_); }

  static GpuPaths gpu(const std::string& pci, double h2d) {
    return {.pci = pci,
            .name = "NVIDIA H100 80GB HBM3",
            .driver = 13000,
            .host_to_device_gbps = h2d,
            .device_to_host_gbps = h2d - 2,
            .peers = {{"0000:2a:00.0", 0, 396.25}, {"0000:3a:00.0", -1, 21.5}}};
  }

  fs::path directory_;
  fs::path file_;
};

TEST_F(PathCache, WhatIsStoredIsReadBackAndOtherGpusEntriesSurvive) {
  std::string problem;
  ASSERT_TRUE(store(file_, gpu("0000:18:00.0", 55.5), &problem)) << problem;
  ASSERT_TRUE(store(file_, gpu("0000:2a:00.0", 54.0), &problem)) << problem;
  const auto first = read_cached(file_, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem);
  ASSERT_TRUE(first.has_value()) << problem;
  EXPECT_EQ(first->pci, "0000:18:00.0");
  EXPECT_DOUBLE_EQ(first->host_to_device_gbps, 55.5);
  EXPECT_DOUBLE_EQ(first->device_to_host_gbps, 53.5);
  ASSERT_EQ(first->peers.size(), 2u);
  EXPECT_EQ(first->peers[0].pci, "0000:2a:00.0");
  EXPECT_EQ(first->peers[0].performance_rank, 0);
  EXPECT_DOUBLE_EQ(first->peers[0].gbps, 396.25);
  EXPECT_EQ(first->peers[1].performance_rank, -1);
  const auto second = read_cached(file_, "0000:2a:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem);
  ASSERT_TRUE(second.has_value());
  EXPECT_DOUBLE_EQ(second->host_to_device_gbps, 54.0);
  EXPECT_TRUE(problem.empty()) << problem;
  EXPECT_EQ(describe(*first),
            "host->GPU 55.5 GB/s, GPU->host 53.5 GB/s; to 0000:2a:00.0 396.2 GB/s (rank 0); "
            "to 0000:3a:00.0 21.5 GB/s");
}

TEST_F(PathCache, AnotherGpuModelDriverOrAbsentFileMeansMeasuringAgain) {
  std::string problem;
  EXPECT_FALSE(read_cached(file_, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem));
  EXPECT_TRUE(problem.empty()) << "a missing file is no problem: " << problem;
  ASSERT_TRUE(store(file_, gpu("0000:18:00.0", 55.5), &problem));
  EXPECT_FALSE(read_cached(file_, "0000:18:00.0", "NVIDIA H200", 13000, &problem));
  EXPECT_FALSE(read_cached(file_, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 13010, &problem));
  EXPECT_FALSE(read_cached(file_, "0000:99:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem));
  EXPECT_TRUE(problem.empty()) << problem;
}

TEST_F(PathCache, ADamagedFileIsSaidAndReplacedByTheNextStore) {
  fs::create_directories(file_.parent_path());
  std::ofstream(file_) << "{\"format\": 1, \"gpus\": [";
  std::string problem;
  EXPECT_FALSE(read_cached(file_, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem));
  EXPECT_EQ(problem, file_.string() + ": not JSON");
  std::ofstream(file_) << R"({"format": 7, "gpus": {}})";
  problem.clear();
  EXPECT_FALSE(read_cached(file_, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem));
  EXPECT_EQ(problem, file_.string() + ": not a commlens path file of format 1");
  std::ofstream(file_) << R"({"format": 1, "gpus": {"0000:18:00.0": {"name": "NVIDIA H100 80GB HBM3"}}})";
  problem.clear();
  EXPECT_FALSE(read_cached(file_, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem));
  EXPECT_NE(problem.find("entry 0000:18:00.0"), std::string::npos) << problem;
  problem.clear();
  ASSERT_TRUE(store(file_, gpu("0000:18:00.0", 55.5), &problem)) << problem;
  EXPECT_TRUE(read_cached(file_, "0000:18:00.0", "NVIDIA H100 80GB HBM3", 13000, &problem)) << problem;
}

TEST_F(PathCache, ADirectoryThatCannotBeWrittenIsSaid) {
  fs::create_directories(directory_);
  std::ofstream(directory_ / "plain_file") << "x";
  std::string problem;
  EXPECT_FALSE(store(directory_ / "plain_file" / "paths.json", gpu("0000:18:00.0", 55.5), &problem));
  EXPECT_NE(problem.find("plain_file"), std::string::npos) << problem;
}

TEST_F(PathCache, ConcurrentWritersOfOneNodeLoseNoEntry) {
  constexpr int kWriters = 8;
  for (int writer = 0; writer < kWriters; ++writer) {
    if (::fork() == 0) {
      std::string problem;
      for (int round = 0; round < 20; ++round) {
        store(file_, gpu("0000:0" + std::to_string(writer) + ":00.0", 50 + round), &problem);
      }
      ::_exit(problem.empty() ? 0 : 1);
    }
  }
  for (int writer = 0; writer < kWriters; ++writer) {
    int status = 0;
    ::wait(&status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int writer = 0; writer < kWriters; ++writer) {
    std::string problem;
    const auto read = read_cached(file_, "0000:0" + std::to_string(writer) + ":00.0", "NVIDIA H100 80GB HBM3",
                                  13000, &problem);
    ASSERT_TRUE(read.has_value()) << "writer " << writer << ": " << problem;
    EXPECT_DOUBLE_EQ(read->host_to_device_gbps, 69);
  }
}

TEST(PathCacheFile, NamedByTheCacheDirectoryAndTheHost) {
  ::setenv("XDG_CACHE_HOME", "/var/cache/user", 1);
  EXPECT_EQ(default_cache_file("node7"), fs::path("/var/cache/user/commlens/paths-node7.json"));
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_cache_file("node7"), fs::path("/home/someone/.cache/commlens/paths-node7.json"));
}

} // namespace
