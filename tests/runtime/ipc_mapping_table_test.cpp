// Which CUDA IPC mappings the runtime keeps and which it closes (runtime/transport/ipc_mapping_table.hpp),
// tested on the host: the rules that keep freed peer allocations from staying allocated (49 GB on
// four ranks sharing an H100 before they existed) and that never close a mapping the call in
// progress reads through. Bases are made-up addresses: nothing is mapped.
#include "transport/ipc_mapping_table.hpp"

#include <gtest/gtest.h>

namespace commlens::runtime {
namespace {

constexpr int kOwner = 100;
constexpr int kOtherOwner = 200;

PublishedBuffer allocation(std::uint64_t buffer_id, std::uint64_t address) {
  PublishedBuffer buffer{};
  buffer.buffer_id = buffer_id;
  buffer.allocation_address = address;
  return buffer;
}

void* base(std::uintptr_t n) {
  return reinterpret_cast<void*>(n << 20);
}

// kOwner's allocations 1 to count, allocation i at i MiB in the owner and mapped at base(i).
void add_owned(MappingTable& table, int count, std::size_t bytes) {
  for (int i = 1; i <= count; ++i) {
    table.add(kOwner, allocation(static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(i) << 20),
              base(static_cast<std::uintptr_t>(i)), bytes);
  }
}

TEST(MappingTable, AMappingIsFoundByOwnerAndBufferIdOnly) {
  MappingTable table(8);
  table.add(kOwner, allocation(1, 0x10000), base(1), 4096);
  EXPECT_EQ(table.use(kOwner, 1), base(1));
  EXPECT_EQ(table.use(kOwner, 2), nullptr);
  EXPECT_EQ(table.use(kOtherOwner, 1), nullptr);
  EXPECT_TRUE(table.contains(kOwner, 1));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.bytes(), 4096u);
}

// Allocators reuse addresses: an owner's new allocation starting inside one this process maps
// means that one was freed.
TEST(MappingTable, ANewAllocationOfTheOwnerInsideAMappedOneClosesIt) {
  MappingTable table(8);
  add_owned(table, 2, 0x10000);
  table.add(kOtherOwner, allocation(3, 0x100000), base(3), 0x10000);
  EXPECT_TRUE(table.close_replaced(kOwner, allocation(1, 0x100000)).empty()) << "the same allocation";
  EXPECT_TRUE(table.close_replaced(kOwner, allocation(9, 0x110000)).empty()) << "just past its end";
  EXPECT_EQ(table.close_replaced(kOwner, allocation(9, 0x10ff00)), std::vector<void*>{base(1)});
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.bytes(), 0x20000u);
  EXPECT_TRUE(table.contains(kOtherOwner, 3)) << "another owner's allocation at the same address";
  EXPECT_EQ(table.closed(), 1u);
}

TEST(MappingTable, TheCountBoundClosesTheLeastRecentlyUsedFirst) {
  MappingTable table(3);
  add_owned(table, 3, 1);
  table.use(kOwner, 1);
  EXPECT_FALSE(table.has_room(0));
  EXPECT_EQ(table.evict(2, table.epoch()), std::vector<void*>{base(2)});
  EXPECT_EQ(table.evict(1, table.epoch()), std::vector<void*>{base(3)});
  EXPECT_TRUE(table.contains(kOwner, 1));
}

TEST(MappingTable, TheByteBoundClosesUntilTheBytesFit) {
  MappingTable table(8);
  add_owned(table, 3, 300);
  EXPECT_TRUE(table.evict(8, table.epoch()).empty()) << "no byte bound known yet";
  table.set_byte_limit(700);
  EXPECT_FALSE(table.has_room(0));
  EXPECT_EQ(table.evict(8, table.epoch()), std::vector<void*>{base(1)});
  EXPECT_EQ(table.bytes(), 600u);
  EXPECT_TRUE(table.has_room(0));
  EXPECT_FALSE(table.has_room(6)) << "six queued opens would reach the count bound";
}

// A call's kernels may read through every mapping it used: its own eviction stops there, even
// over the bounds.
TEST(MappingTable, MappingsUsedSinceTheCallsEpochAreNeverClosedByIt) {
  MappingTable table(2);
  add_owned(table, 2, 10);
  const std::uint64_t epoch = table.epoch();
  table.use(kOwner, 1);
  table.add(kOwner, allocation(3, 0x300000), base(3), 10);
  EXPECT_EQ(table.evict(0, epoch), std::vector<void*>{base(2)});
  EXPECT_EQ(table.size(), 2u);
  EXPECT_TRUE(table.close_owner(kOwner, epoch).empty());
}

TEST(MappingTable, ARefusedOpenClosesTheOwnersIdleMappingsOnly) {
  MappingTable table(8);
  table.add(kOwner, allocation(1, 0x100000), base(1), 10);
  table.add(kOtherOwner, allocation(2, 0x200000), base(2), 10);
  const std::uint64_t epoch = table.epoch();
  table.add(kOwner, allocation(3, 0x300000), base(3), 10);
  EXPECT_EQ(table.close_owner(kOwner, epoch), std::vector<void*>{base(1)});
  EXPECT_TRUE(table.contains(kOtherOwner, 2));
  EXPECT_TRUE(table.contains(kOwner, 3));
}

TEST(MappingTable, AnAllocationTheOwnerFreedIsClosedByItsBufferIdAlone) {
  MappingTable table(8);
  add_owned(table, 3, 1 << 20);
  table.add(kOtherOwner, allocation(2, 2 << 20), base(9), 1 << 20);
  EXPECT_EQ(table.close_buffer(kOwner, 2), std::vector<void*>{base(2)});
  EXPECT_FALSE(table.contains(kOwner, 2));
  EXPECT_TRUE(table.contains(kOtherOwner, 2)) << "another owner's allocation 2 is another allocation";
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.bytes(), 3u << 20);
  EXPECT_TRUE(table.close_buffer(kOwner, 2).empty());
  EXPECT_EQ(table.peak_bytes(), 4u << 20) << "the most mapped at once stays after closing";
}

TEST(MappingTable, CloseAllEmptiesTheTable) {
  MappingTable table(8);
  table.add(kOwner, allocation(1, 0x100000), base(1), 10);
  table.add(kOtherOwner, allocation(2, 0x200000), base(2), 10);
  EXPECT_EQ(table.close_all(), (std::vector<void*>{base(1), base(2)}));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.bytes(), 0u);
  EXPECT_EQ(table.closed(), 0u) << "finalize is not an eviction";
}

} // namespace
} // namespace commlens::runtime
