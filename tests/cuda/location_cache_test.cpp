// The buffer-location cache (collectors/cupti/location_cache.hpp) without a GPU: the driver's
// pointer-attribute query is replaced by a table of allocations the test changes, as cudaFree and
// cudaMallocManaged change the driver's.
#include "location_cache.hpp"

#include <gtest/gtest.h>

#include <map>
#include <thread>

namespace commlens::cuda {
namespace {

// The "driver": allocations by start address, and how often it was asked.
std::map<std::uintptr_t, LocatedRange> allocations;
int lookups = 0;

LocatedRange look_up(std::uintptr_t address) {
  ++lookups;
  auto after = allocations.upper_bound(address);
  if (after != allocations.begin() && address < std::prev(after)->second.end) {
    return std::prev(after)->second;
  }
  return {address, address + 1, BufferLocation::Host};
}

void allocate(std::uintptr_t begin, std::uintptr_t bytes, BufferLocation location) {
  allocations[begin] = {begin, begin + bytes, location};
}

class LocationCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    allocations.clear();
    lookups = 0;
  }
  LocationCache cache;
};

constexpr std::uintptr_t kBase = 0x7f0000000000;

TEST_F(LocationCacheTest, AnyAddressInsideACachedAllocationIsAnsweredWithoutAskingAgain) {
  allocate(kBase, 1 << 20, BufferLocation::Device);
  EXPECT_EQ(cache.locate(kBase, look_up), BufferLocation::Device);
  EXPECT_EQ(cache.locate(kBase + 4096, look_up), BufferLocation::Device);
  EXPECT_EQ(cache.locate(kBase + (1 << 20) - 1, look_up), BufferLocation::Device);
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(cache.locate(kBase + (1 << 20), look_up), BufferLocation::Host) << "one past the end";
  EXPECT_EQ(lookups, 2);
}

TEST_F(LocationCacheTest, NullIsUnknownWithoutALookup) {
  EXPECT_EQ(cache.locate(0, look_up), BufferLocation::Unknown);
  EXPECT_EQ(lookups, 0);
}

TEST_F(LocationCacheTest, AnAddressFreedAndReallocatedAsManagedIsLookedUpAfresh) {
  allocate(kBase, 1 << 20, BufferLocation::Device);
  ASSERT_EQ(cache.locate(kBase + 64, look_up), BufferLocation::Device);
  // cudaFree, then cudaMallocManaged hands out the same range: the callbacks call forget_all().
  allocations.clear();
  allocate(kBase, 1 << 20, BufferLocation::Managed);
  LocationCache::forget_all();
  EXPECT_EQ(cache.locate(kBase + 64, look_up), BufferLocation::Managed);
  EXPECT_EQ(lookups, 2);
  EXPECT_EQ(cache.locate(kBase + 128, look_up), BufferLocation::Managed);
  EXPECT_EQ(lookups, 2) << "cached again after the fresh lookup";
}

TEST_F(LocationCacheTest, HostPointersAreCachedOneAddressAtATimeAndForgottenToo) {
  EXPECT_EQ(cache.locate(kBase, look_up), BufferLocation::Host);
  EXPECT_EQ(cache.locate(kBase, look_up), BufferLocation::Host);
  EXPECT_EQ(lookups, 1);
  allocate(kBase, 4096, BufferLocation::Device); // freed host memory, its addresses reused by CUDA
  LocationCache::forget_all();
  EXPECT_EQ(cache.locate(kBase, look_up), BufferLocation::Device);
}

TEST_F(LocationCacheTest, AFreeOnAnotherThreadEmptiesThisThreadsCache) {
  allocate(kBase, 1 << 20, BufferLocation::Device);
  ASSERT_EQ(cache.locate(kBase, look_up), BufferLocation::Device);
  allocations.clear();
  allocate(kBase, 1 << 20, BufferLocation::Host);
  std::thread([] { LocationCache::forget_all(); }).join();
  EXPECT_EQ(cache.locate(kBase, look_up), BufferLocation::Host);
  EXPECT_EQ(lookups, 2);
}

TEST_F(LocationCacheTest, TheOldestRangeMakesRoomWhenTheCacheIsFull) {
  constexpr int kMoreThanFits = 17;
  for (int i = 0; i < kMoreThanFits; ++i) {
    allocate(kBase + i * 0x100000, 0x1000, BufferLocation::Device);
    cache.locate(kBase + i * 0x100000, look_up);
  }
  EXPECT_EQ(lookups, kMoreThanFits);
  cache.locate(kBase + (kMoreThanFits - 1) * 0x100000, look_up); // newest: still cached
  EXPECT_EQ(lookups, kMoreThanFits);
  cache.locate(kBase, look_up); // oldest: evicted by the seventeenth
  EXPECT_EQ(lookups, kMoreThanFits + 1);
}

} // namespace
} // namespace commlens::cuda
