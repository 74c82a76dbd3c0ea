// Host staging of device buffers (collectors/runtime_dispatch/device_staging.hpp) against a stand-in for
// CUDA: "device memory" is one host array the fake on_device() recognises, so what is copied in, copied back,
// released and kept can be checked exactly without a GPU.
#include "collector_hooks.hpp"
#include "device_staging.hpp"
#include "handle_map.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <numeric>
#include <string>

namespace commlens::pmpi {
namespace {

// The fake device: two allocations of 4 KiB in one array.
constexpr std::size_t kAllocation = 4096;
std::array<char, 2 * kAllocation> device_memory;
int pinned_live = 0;
int copies = 0;

bool fake_on_device(const void* buffer) noexcept {
  const char* p = static_cast<const char*>(buffer);
  return p >= device_memory.data() && p < device_memory.data() + device_memory.size();
}

bool fake_allocation(const void* buffer, const void** base, std::size_t* bytes) noexcept {
  const std::size_t offset =
      static_cast<std::size_t>(static_cast<const char*>(buffer) - device_memory.data());
  *base = device_memory.data() + offset / kAllocation * kAllocation;
  *bytes = kAllocation;
  return true;
}

void* fake_allocate(std::size_t bytes) noexcept {
  ++pinned_live;
  return std::malloc(bytes);
}

void fake_free(void* memory) noexcept {
  --pinned_live;
  std::free(memory);
}

bool fake_copy(void* destination, const void* source, std::size_t bytes) noexcept {
  ++copies;
  std::memmove(destination, source, bytes);
  return true;
}

// A request handle nobody else uses (a pointer in Open MPI, an integer in MPICH).
MPI_Request fake_request(std::uint32_t value) {
  MPI_Request request;
  std::memset(&request, 0, sizeof request);
  std::memcpy(&request, &value, sizeof value);
  return request;
}

class DeviceStagingTest : public ::testing::Test {
protected:
  void SetUp() override {
    contract::collector_hooks().staging = {fake_on_device, fake_allocation, fake_allocate, fake_free,
                                           fake_copy};
    std::iota(device_memory.begin(), device_memory.end(), 0);
    copies = 0;
  }
  void TearDown() override {
    staged_requests::release_all();
    EXPECT_EQ(pinned_live, 0) << "pinned blocks left after release_all";
    contract::collector_hooks().staging = {};
  }
  static int* device_ints(std::size_t offset_bytes) {
    return reinterpret_cast<int*>(device_memory.data() + offset_bytes);
  }
};

TEST_F(DeviceStagingTest, HostBuffersPassThroughUntouched) {
  int host[4] = {1, 2, 3, 4};
  DeviceStaging staging;
  EXPECT_EQ(staging.stage(host, 16, false, false), host);
  EXPECT_EQ(staging.stage(static_cast<void*>(MPI_IN_PLACE), 16, true, true), MPI_IN_PLACE);
  EXPECT_FALSE(staging.staged());
  EXPECT_EQ(staging.finish(MPI_SUCCESS), MPI_SUCCESS);
  EXPECT_EQ(copies, 0);
}

TEST_F(DeviceStagingTest, InputIsCopiedInAndOutputCopiedBackOnlyOverItsSpan) {
  int* input = device_ints(64);
  int* output = device_ints(kAllocation + 128);
  const int before_after_output = output[8];
  DeviceStaging staging;
  const int* host_input = staging.stage(static_cast<const int*>(input), 8 * sizeof(int), false, false);
  int* host_output = staging.stage(output, 8 * sizeof(int), true, false);
  ASSERT_NE(host_input, input);
  ASSERT_NE(host_output, output);
  EXPECT_EQ(std::memcmp(host_input, input, 8 * sizeof(int)), 0);
  EXPECT_EQ(copies, 1) << "an output MPI only writes is not copied in";
  for (int i = 0; i < 8; ++i) {
    host_output[i] = 1000 + host_input[i];
  }
  EXPECT_EQ(staging.finish(MPI_SUCCESS), MPI_SUCCESS);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(output[i], 1000 + input[i]);
  }
  EXPECT_EQ(output[8], before_after_output) << "nothing past the span is written";
  EXPECT_TRUE(staging.staged());
}

TEST_F(DeviceStagingTest, SpanIsClampedToTheAllocation) {
  int* near_end = device_ints(kAllocation - 8);
  DeviceStaging staging;
  int* host = staging.stage(near_end, 1 << 20, true, true);
  host[0] = -1;
  host[1] = -2;
  const char next_allocation_first = device_memory[kAllocation];
  EXPECT_EQ(staging.finish(MPI_SUCCESS), MPI_SUCCESS);
  EXPECT_EQ(near_end[0], -1);
  EXPECT_EQ(near_end[1], -2);
  EXPECT_EQ(device_memory[kAllocation], next_allocation_first);
}

TEST_F(DeviceStagingTest, UnknownSpanStagesTheWholeAllocationFromItsStart) {
  int* middle = device_ints(kAllocation + 256);
  DeviceStaging staging;
  int* host = staging.stage(middle, kWholeAllocation, true, false);
  EXPECT_EQ(host[-64], device_ints(kAllocation)[0])
      << "the image starts at the allocation (a negative lower bound)";
  host[-1] = 77;
  EXPECT_EQ(staging.finish(MPI_SUCCESS), MPI_SUCCESS);
  EXPECT_EQ(middle[-1], 77);
}

TEST_F(DeviceStagingTest, FailedCallCopiesNothingBack) {
  int* output = device_ints(0);
  const int old = output[0];
  DeviceStaging staging;
  int* host = staging.stage(output, 4, true, true);
  host[0] = old + 1;
  EXPECT_EQ(staging.finish(MPI_ERR_COUNT), MPI_ERR_COUNT);
  EXPECT_EQ(output[0], old);
}

TEST_F(DeviceStagingTest, NonblockingImagesStayUntilTheRequestCompletes) {
  int* output = device_ints(32);
  MPI_Request request = fake_request(0x1000);
  {
    DeviceStaging staging(MPI_COMM_NULL, DeviceStaging::Kind::Nonblocking);
    int* host = staging.stage(output, 4, true, false);
    host[0] = 4242;
    EXPECT_EQ(staging.finish(MPI_SUCCESS, &request), MPI_SUCCESS);
  }
  EXPECT_EQ(pinned_live, 1) << "the image outlives the call";
  EXPECT_NE(output[0], 4242) << "not copied back before completion";
  EXPECT_EQ(staged_requests::tracks(contract::handle_key(request)), contract::RequestWork::Nonblocking);
  EXPECT_EQ(staged_requests::completed(contract::handle_key(request)), MPI_SUCCESS);
  EXPECT_EQ(output[0], 4242);
  EXPECT_EQ(staged_requests::tracks(contract::handle_key(request)), contract::RequestWork::None);
}

// Open MPI's nonblocking collectives on a one-process communicator return one shared request,
// already complete, for every call: a second call given the handle of an earlier unfinished one
// means MPI is done with the earlier, whose outputs must still reach the device.
TEST_F(DeviceStagingTest, AHandleGivenToTwoUnfinishedCallsFinishesTheEarlierOne) {
  int* first_output = device_ints(0);
  int* second_output = device_ints(kAllocation);
  const MPI_Request shared = fake_request(0x2000);
  for (int* output : {first_output, second_output}) {
    DeviceStaging staging(MPI_COMM_NULL, DeviceStaging::Kind::Nonblocking);
    int* host = staging.stage(output, 4, true, false);
    host[0] = output == first_output ? 1111 : 2222;
    MPI_Request request = shared;
    EXPECT_EQ(staging.finish(MPI_SUCCESS, &request), MPI_SUCCESS);
  }
  EXPECT_EQ(first_output[0], 1111) << "the earlier call's output, copied back when its handle came again";
  EXPECT_NE(second_output[0], 2222) << "the later call waits for its own completion";
  EXPECT_EQ(staged_requests::completed(contract::handle_key(shared)), MPI_SUCCESS);
  EXPECT_EQ(second_output[0], 2222);
}

TEST_F(DeviceStagingTest, PersistentImagesAreFilledAtEachStartAndReleasedAtFree) {
  int* input = device_ints(0);
  int* output = device_ints(kAllocation);
  MPI_Request request = fake_request(0x2000);
  const int* host_input = nullptr;
  int* host_output = nullptr;
  {
    DeviceStaging staging(MPI_COMM_NULL, DeviceStaging::Kind::Persistent);
    host_input = staging.stage(static_cast<const int*>(input), 4, false, false);
    host_output = staging.stage(output, 4, true, false);
    EXPECT_EQ(copies, 0) << "a persistent call's data is taken at its start";
    EXPECT_EQ(staging.finish(MPI_SUCCESS, &request), MPI_SUCCESS);
  }
  for (int round = 0; round < 2; ++round) {
    input[0] = 10 + round;
    staged_requests::starting(&request, 1);
    EXPECT_EQ(host_input[0], 10 + round);
    host_output[0] = 20 + round;
    EXPECT_EQ(staged_requests::completed(contract::handle_key(request)), MPI_SUCCESS);
    EXPECT_EQ(output[0], 20 + round);
  }
  EXPECT_EQ(staged_requests::tracks(contract::handle_key(request)), contract::RequestWork::Persistent);
  EXPECT_EQ(pinned_live, 2);
  staged_requests::freed(contract::handle_key(request));
  EXPECT_EQ(staged_requests::tracks(contract::handle_key(request)), contract::RequestWork::None);
}

TEST_F(DeviceStagingTest, FinalizeFreesEveryPinnedBlockAndReportsThePeak) {
  MPI_Request request = fake_request(0x3000);
  {
    DeviceStaging staging(MPI_COMM_NULL, DeviceStaging::Kind::Nonblocking);
    staging.stage(device_ints(0), 4096, true, false);
    staging.stage(static_cast<const int*>(device_ints(kAllocation)), 100, false, false);
    EXPECT_EQ(staging.finish(MPI_SUCCESS, &request), MPI_SUCCESS);
  }
  EXPECT_EQ(pinned_live, 2);
  const staged_requests::PinnedUsage usage = staged_requests::release_all();
  EXPECT_EQ(usage.peak_bytes, 4096u + 4096u) << "two blocks of the smallest size";
  EXPECT_EQ(usage.left_bytes, 0u);
  EXPECT_EQ(pinned_live, 0);
}

TEST_F(DeviceStagingTest, WhatCannotBeStagedIsRefusedThroughTheErrorHandlerWithItsReason) {
  EXPECT_TRUE(any_on_device({nullptr, device_ints(0)}));
  EXPECT_FALSE(any_on_device({nullptr, MPI_IN_PLACE}));
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_SELF, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int code = refuse_on_communicator(comm, Refusal::Partitioned);
  EXPECT_NE(code, MPI_SUCCESS);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  EXPECT_NE(
      std::string(text, static_cast<std::size_t>(length)).find("partitioned communication on device memory"),
      std::string::npos)
      << text;
  EXPECT_NE(refuse_on_communicator(comm, Refusal::OneSided), code) << "each reason its own code";
  MPI_Comm_free(&comm);
}

TEST_F(DeviceStagingTest, WithoutPinnedMemoryTheCallIsRefusedInsteadOfGivenADevicePointer) {
  contract::collector_hooks().staging.allocate_pinned = [](std::size_t) noexcept -> void* { return nullptr; };
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_SELF, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  DeviceStaging staging(comm);
  EXPECT_EQ(staging.stage(device_ints(0), 64, true, true), nullptr);
  EXPECT_TRUE(staging.failed());
  const int code = staging.refuse_call();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  EXPECT_NE(std::string(text, static_cast<std::size_t>(length)).find("could not be staged"),
            std::string::npos)
      << text;
  MPI_Comm_free(&comm);
}

TEST_F(DeviceStagingTest, DenseTypesGiveExactSpansAndVectorsDoNot) {
  EXPECT_TRUE(DeviceStaging::dense(MPI_INT));
  EXPECT_EQ(DeviceStaging::size_of(MPI_DOUBLE), sizeof(double));
  MPI_Datatype strided;
  MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  EXPECT_FALSE(DeviceStaging::dense(strided));
  MPI_Type_free(&strided);
}

} // namespace
} // namespace commlens::pmpi
