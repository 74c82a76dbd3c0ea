// Probes under the point-to-point runtime (runtime/point_to_point/probed_messages.hpp) against
// real Open MPI: a probe must report a rendezvous header's data size, keep what it had to receive
// in the order MPI would deliver it, and hand out message handles MPI_Mrecv can redeem. One MPI
// process sends to itself; "headers" here are 128-byte messages that start with a marker and name
// a size, so no GPU is needed.
#include "point_to_point/completed_request.hpp"
#include "point_to_point/probed_messages.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace commlens::runtime {
namespace {

constexpr std::size_t kHeaderBytes = 128;
constexpr char kMarker[8] = {'h', 'e', 'a', 'd', 'e', 'r', '!', '!'};

std::optional<std::uint64_t> recognise(std::span<const unsigned char> bytes) {
  if (bytes.size() != kHeaderBytes || std::memcmp(bytes.data(), kMarker, sizeof kMarker) != 0) {
    return std::nullopt;
  }
  std::uint64_t size = 0;
  std::memcpy(&size, bytes.data() + sizeof kMarker, sizeof size);
  return size;
}

std::vector<unsigned char> header_for(std::uint64_t data_bytes) {
  std::vector<unsigned char> header(kHeaderBytes, 0);
  std::memcpy(header.data(), kMarker, sizeof kMarker);
  std::memcpy(header.data() + sizeof kMarker, &data_bytes, sizeof data_bytes);
  return header;
}

std::vector<unsigned char> plain(std::size_t bytes, unsigned char first) {
  std::vector<unsigned char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    data[i] = static_cast<unsigned char>(first + i);
  }
  return data;
}

int count_of(const MPI_Status& status) {
  int count = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  return count;
}

// Every test sends to itself on its own duplicate of MPI_COMM_WORLD and must leave nothing behind.
class ProbedMessagesTest : public ::testing::Test {
protected:
  void SetUp() override { MPI_Comm_dup(MPI_COMM_WORLD, &comm_); }
  void TearDown() override {
    MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
    int left = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &left, MPI_STATUS_IGNORE);
    EXPECT_EQ(left, 0) << "a message was left in MPI";
    EXPECT_FALSE(probed_.take(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_)) << "a kept message was left";
    MPI_Comm_free(&comm_);
  }
  // Sent to this process; the bytes live until the test ends (moving a vector keeps its bytes where
  // they are).
  void send(std::vector<unsigned char> bytes, int tag) {
    buffers_.push_back(std::move(bytes));
    sends_.emplace_back();
    MPI_Isend(buffers_.back().data(), static_cast<int>(buffers_.back().size()), MPI_BYTE, 0, tag, comm_,
              &sends_.back());
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  ProbedMessages probed_{recognise, kHeaderBytes, [](MPI_Comm, int) { return true; }};
  std::vector<std::vector<unsigned char>> buffers_{};
  std::vector<MPI_Request> sends_{};
};

TEST_F(ProbedMessagesTest, AProbeOfAHeaderReportsTheDataSizeAndKeepsTheHeader) {
  send(header_for(1'000'000), 5);
  MPI_Status status;
  ASSERT_EQ(probed_.probe(0, 5, comm_, nullptr, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 1'000'000);
  EXPECT_EQ(status.MPI_SOURCE, 0);
  EXPECT_EQ(status.MPI_TAG, 5);
  // A second probe, blocking or not, sees the same message without MPI.
  int flag = 0;
  ASSERT_EQ(probed_.probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &status), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(count_of(status), 1'000'000);
  const std::optional<ProbedMessage> kept = probed_.take(0, 5, comm_);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->rendezvous);
  EXPECT_EQ(kept->bytes, 1'000'000u);
  EXPECT_EQ(kept->contents, header_for(1'000'000));
}

TEST_F(ProbedMessagesTest, APlainMessageOfAHeadersSizeKeepsItsOwnSizeAndBytes) {
  send(plain(kHeaderBytes, 3), 6);
  MPI_Status status;
  int flag = 0;
  ASSERT_EQ(probed_.probe(MPI_ANY_SOURCE, 6, comm_, &flag, &status), MPI_SUCCESS);
  ASSERT_EQ(flag, 1);
  EXPECT_EQ(count_of(status), static_cast<int>(kHeaderBytes));
  const std::optional<ProbedMessage> kept = probed_.take(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_);
  ASSERT_TRUE(kept);
  EXPECT_FALSE(kept->rendezvous);
  EXPECT_EQ(kept->contents, plain(kHeaderBytes, 3));
}

TEST_F(ProbedMessagesTest, OtherSizesAreLeftToMpi) {
  send(plain(100, 1), 7);
  MPI_Status status;
  ASSERT_EQ(probed_.probe(0, 7, comm_, nullptr, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 100);
  EXPECT_FALSE(probed_.take(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_));
  std::vector<unsigned char> received(100);
  MPI_Recv(received.data(), 100, MPI_BYTE, 0, 7, comm_, MPI_STATUS_IGNORE);
  EXPECT_EQ(received, plain(100, 1));
}

// MPI delivers a sender's messages in the order sent: a receive of any tag after the probe must
// still get the older message first, so the probe keeps it too (still in MPI, behind the handle
// MPI_Mprobe gave: it cannot be a header); a newer one stays in MPI's matching.
TEST_F(ProbedMessagesTest, OlderMessagesOfTheSenderAreKeptInOrderAndNewerOnesStayInMpi) {
  send(plain(100, 10), 1);
  send(header_for(4096), 2);
  send(plain(50, 20), 1);
  MPI_Status status;
  ASSERT_EQ(probed_.probe(0, 2, comm_, nullptr, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 4096);
  EXPECT_EQ(status.MPI_TAG, 2);
  // Any tag: the oldest message, kept.
  ASSERT_EQ(probed_.probe(0, MPI_ANY_TAG, comm_, nullptr, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 100);
  std::optional<ProbedMessage> first = probed_.take(0, MPI_ANY_TAG, comm_);
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->received());
  EXPECT_EQ(first->bytes, 100u);
  std::vector<unsigned char> older(100);
  ASSERT_EQ(MPI_Mrecv(older.data(), 100, MPI_BYTE, &first->in_mpi, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(older, plain(100, 10));
  // Tag 1 again: nothing kept matches, the receive is MPI's and gets the newer message.
  EXPECT_FALSE(probed_.take(0, 1, comm_));
  std::vector<unsigned char> newer(50);
  MPI_Recv(newer.data(), 50, MPI_BYTE, 0, 1, comm_, MPI_STATUS_IGNORE);
  EXPECT_EQ(newer, plain(50, 20));
  const std::optional<ProbedMessage> header = probed_.take(0, 2, comm_);
  ASSERT_TRUE(header);
  EXPECT_EQ(header->bytes, 4096u);
}

// Only ranks of this node send rendezvous headers: a probe of another's message of a header's size
// leaves it to MPI.
TEST_F(ProbedMessagesTest, MessagesOfSendersThatCannotSendHeadersAreLeftToMpi) {
  ProbedMessages elsewhere{recognise, kHeaderBytes, [](MPI_Comm, int) { return false; }};
  send(header_for(1'000'000), 13);
  MPI_Status status;
  ASSERT_EQ(elsewhere.probe(0, 13, comm_, nullptr, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), static_cast<int>(kHeaderBytes));
  EXPECT_FALSE(elsewhere.take(0, 13, comm_));
  MPI_Message message = MPI_MESSAGE_NULL;
  ASSERT_EQ(elsewhere.mprobe(0, 13, comm_, nullptr, &message, &status), MPI_SUCCESS);
  EXPECT_FALSE(elsewhere.redeem(&message).message) << "MPI's own handle";
  std::vector<unsigned char> received(kHeaderBytes);
  ASSERT_EQ(MPI_Mrecv(received.data(), static_cast<int>(kHeaderBytes), MPI_BYTE, &message, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
  EXPECT_EQ(received, header_for(1'000'000));
}

TEST_F(ProbedMessagesTest, AnIprobeThatFindsNothingKeepsNothing) {
  int flag = 1;
  MPI_Status status;
  ASSERT_EQ(probed_.probe(0, 3, comm_, &flag, &status), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
  MPI_Message message = MPI_MESSAGE_NULL;
  flag = 1;
  ASSERT_EQ(probed_.mprobe(0, 3, comm_, &flag, &message, &status), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
}

TEST_F(ProbedMessagesTest, MprobeOfAHeaderHandsOutAHandleOfItsOwnThatMrecvRedeems) {
  send(header_for(77'777), 8);
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  ASSERT_EQ(probed_.mprobe(MPI_ANY_SOURCE, 8, comm_, nullptr, &message, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 77'777);
  ASSERT_NE(message, MPI_MESSAGE_NULL);
  RedeemedMessage redeemed = probed_.redeem(&message);
  EXPECT_EQ(redeemed.comm, comm_);
  ASSERT_TRUE(redeemed.message);
  EXPECT_TRUE(redeemed.message->rendezvous);
  EXPECT_EQ(redeemed.message->bytes, 77'777u);
  EXPECT_EQ(message, MPI_MESSAGE_NULL);
  EXPECT_FALSE(probed_.redeem(&message).message);
}

TEST_F(ProbedMessagesTest, MprobeOfOtherSizesReturnsMpisHandleWithItsCommunicatorNoted) {
  send(plain(64, 5), 9);
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  int flag = 0;
  ASSERT_EQ(probed_.mprobe(0, 9, comm_, &flag, &message, &status), MPI_SUCCESS);
  ASSERT_EQ(flag, 1);
  EXPECT_EQ(count_of(status), 64);
  const MPI_Message mpis = message;
  const RedeemedMessage redeemed = probed_.redeem(&message);
  EXPECT_EQ(redeemed.comm, comm_);
  EXPECT_FALSE(redeemed.message);
  EXPECT_EQ(message, mpis);
  std::vector<unsigned char> received(64);
  ASSERT_EQ(MPI_Mrecv(received.data(), 64, MPI_BYTE, &message, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(received, plain(64, 5));
}

TEST_F(ProbedMessagesTest, MprobeTakesAMessageAProbeKeptBeforeAskingMpi) {
  send(header_for(9), 11);
  send(header_for(10), 11);
  MPI_Status status;
  ASSERT_EQ(probed_.probe(0, 11, comm_, nullptr, &status), MPI_SUCCESS);
  MPI_Message message = MPI_MESSAGE_NULL;
  ASSERT_EQ(probed_.mprobe(0, 11, comm_, nullptr, &message, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 9) << "the older message first";
  ASSERT_EQ(probed_.mprobe(0, 11, comm_, nullptr, &message, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 10);
  EXPECT_EQ(probed_.redeem(&message).message->bytes, 10u);
}

// An older message a probe kept in MPI is MPI's to hand to MPI_Mprobe: its own handle, received
// with the receive's datatype.
TEST_F(ProbedMessagesTest, MprobeOfAMessageKeptInMpiReturnsMpisHandle) {
  send(plain(64, 30), 14);
  send(header_for(8), 15);
  MPI_Status status;
  ASSERT_EQ(probed_.probe(0, 15, comm_, nullptr, &status), MPI_SUCCESS);
  MPI_Message message = MPI_MESSAGE_NULL;
  ASSERT_EQ(probed_.mprobe(0, MPI_ANY_TAG, comm_, nullptr, &message, &status), MPI_SUCCESS);
  EXPECT_EQ(status.MPI_TAG, 14);
  EXPECT_EQ(count_of(status), 64);
  const RedeemedMessage redeemed = probed_.redeem(&message);
  EXPECT_EQ(redeemed.comm, comm_);
  EXPECT_FALSE(redeemed.message);
  std::vector<int> ints(16);
  ASSERT_EQ(MPI_Mrecv(ints.data(), 16, MPI_INT, &message, &status), MPI_SUCCESS);
  int count = 0;
  MPI_Get_count(&status, MPI_INT, &count);
  EXPECT_EQ(count, 16);
  const auto bytes = plain(64, 30);
  EXPECT_EQ(std::memcmp(ints.data(), bytes.data(), 64), 0);
  EXPECT_TRUE(probed_.take(0, 15, comm_));
}

TEST_F(ProbedMessagesTest, KeptMessagesMatchOnlyTheirCommunicatorAndGoWhenItIsFreed) {
  send(header_for(5), 12);
  MPI_Status status;
  ASSERT_EQ(probed_.probe(0, 12, comm_, nullptr, &status), MPI_SUCCESS);
  EXPECT_FALSE(probed_.take(0, 12, MPI_COMM_WORLD));
  probed_.forget(comm_);
  EXPECT_FALSE(probed_.take(0, 12, comm_));
}

MPI_Status status_of(int source, int tag, int error, int bytes) {
  MPI_Status status;
  status.MPI_SOURCE = source;
  status.MPI_TAG = tag;
  status.MPI_ERROR = error;
  MPI_Status_set_elements(&status, MPI_BYTE, bytes);
  return status;
}

TEST(CompletedRequest, WaitAndTestReportTheStatusItWasMadeWith) {
  const MPI_Status made = status_of(3, 4, MPI_SUCCESS, 77);
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(completed_request(made, &request), MPI_SUCCESS);
  int flag = 0;
  MPI_Status status;
  ASSERT_EQ(MPI_Test(&request, &flag, &status), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(request, MPI_REQUEST_NULL);
  EXPECT_EQ(status.MPI_SOURCE, 3);
  EXPECT_EQ(status.MPI_TAG, 4);
  EXPECT_EQ(count_of(status), 77);

  ASSERT_EQ(completed_request(made, &request), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
  EXPECT_EQ(count_of(status), 77);
}

TEST(CompletedRequest, AWaitReturnsTheErrorOfTheReceive) {
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const MPI_Status made = status_of(0, 1, MPI_ERR_TRUNCATE, 8);
  MPI_Request request = MPI_REQUEST_NULL;
  ASSERT_EQ(completed_request(made, &request), MPI_SUCCESS);
  MPI_Status status;
  const int rc = MPI_Wait(&request, &status);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

} // namespace
} // namespace commlens::runtime
