// A GPU's NUMA placement (runtime/topology/numa_placement.hpp), without a GPU: CPU lists as sysfs
// writes them, PCI bus ids as CUDA prints them, a sysfs tree laid out as Linux lays it out, this
// machine's real sysfs, and the verdict on a rank placed near or away from its GPU.
#include "numa_placement.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

using namespace commlens::runtime::topology;
namespace fs = std::filesystem;

TEST(NumaPlacement, CpuListsParseAndFormatAsSysfsWritesThem) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), std::vector<int>{5});
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list(parse_cpu_list("16-31,48-63")), "16-31,48-63");
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_TRUE(parse_cpu_list("3-1").empty()) << "a reversed range is not a list";
  EXPECT_TRUE(parse_cpu_list("a-b").empty());
}

class SysfsTree : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("commlens_sysfs_" + std::to_string(::getpid()));
    const fs::path device = root_ / "bus" / "pci" / "devices" / "0000:1b:00.0";
    fs::create_directories(device);
    std::ofstream(device / "numa_node") << "1\n";
    std::ofstream(device / "local_cpulist") << "16-31\n";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(SysfsTree, AGpuIsFoundByTheBusIdCudaPrints) {
  for (const char* id : {"0000:1b:00.0", "0000:1B:00.0", "00000000:1B:00.0"}) {
    const auto placement = numa_placement(id, root_);
    ASSERT_TRUE(placement) << id;
    EXPECT_EQ(placement->node, 1) << id;
    EXPECT_EQ(format_cpu_list(placement->local_cpus), "16-31") << id;
  }
  EXPECT_FALSE(numa_placement("0000:1c:00.0", root_)) << "no such device";
}

TEST_F(SysfsTree, TheVerdictSaysWhetherTheRanksCpusAreTheGpus) {
  const auto placement = numa_placement("0000:1b:00.0", root_);
  EXPECT_EQ(describe_placement(placement, parse_cpu_list("16-19")),
            "NUMA node 1, local CPUs 16-31; this rank's CPUs 16-19: local");
  EXPECT_EQ(describe_placement(placement, parse_cpu_list("0-3")),
            "NUMA node 1, local CPUs 16-31; this rank's CPUs 0-3: remote (host staging crosses sockets)");
  EXPECT_EQ(describe_placement(placement, parse_cpu_list("14-17")),
            "NUMA node 1, local CPUs 16-31; this rank's CPUs 14-17: partly local");
  EXPECT_EQ(describe_placement(std::nullopt, {0}), "NUMA placement not reported");
}

// This machine's PCI devices, as its kernel reports them (a single-socket machine says node -1).
TEST(NumaPlacement, ThisMachinesSysfsReadsAsWritten) {
  const fs::path devices = "/sys/bus/pci/devices";
  std::error_code error;
  if (!fs::is_directory(devices, error) || fs::is_empty(devices, error)) {
    GTEST_SKIP() << "no PCI devices in /sys on this machine";
  }
  const fs::directory_entry first = *fs::directory_iterator(devices);
  const auto placement = numa_placement(first.path().filename().string());
  ASSERT_TRUE(placement);
  std::string node;
  std::ifstream(first.path() / "numa_node") >> node;
  EXPECT_EQ(std::to_string(placement->node), node);
  std::string cpus;
  std::ifstream(first.path() / "local_cpulist") >> cpus;
  EXPECT_EQ(format_cpu_list(placement->local_cpus), cpus);
  EXPECT_FALSE(process_cpus().empty());
}

} // namespace
