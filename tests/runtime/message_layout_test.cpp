// Where a (count, datatype) message lies in memory, which decides how the runtime moves device
// buffers: contiguous messages may go as a rendezvous, every other layout is staged by copying
// its span. Host-only, runs without a GPU.
#include "datatypes/message_layout.hpp"

#include <gtest/gtest.h>

namespace commlens::runtime {
namespace {

TEST(MessageLayout, PredefinedTypesAreContiguousAndTheirSpanIsTheirBytes) {
  const MessageLayout layout = message_layout(10, MPI_INT);
  EXPECT_TRUE(layout.supported);
  EXPECT_TRUE(layout.contiguous);
  EXPECT_EQ(layout.bytes, 40u);
  EXPECT_EQ(layout.span_start, 0);
  EXPECT_EQ(layout.span, 40u);
}

TEST(MessageLayout, ContiguousDerivedTypesAreContiguous) {
  MPI_Datatype three_doubles;
  MPI_Type_contiguous(3, MPI_DOUBLE, &three_doubles);
  MPI_Type_commit(&three_doubles);
  const MessageLayout layout = message_layout(5, three_doubles);
  EXPECT_TRUE(layout.contiguous);
  EXPECT_EQ(layout.bytes, 120u);
  EXPECT_EQ(layout.span, 120u);
  MPI_Type_free(&three_doubles);
}

TEST(MessageLayout, AVectorSpansFromItsFirstToItsLastElement) {
  MPI_Datatype every_other;
  MPI_Type_vector(4, 1, 2, MPI_INT, &every_other); // ints 0, 2, 4, 6
  MPI_Type_commit(&every_other);
  const MessageLayout one = message_layout(1, every_other);
  EXPECT_FALSE(one.contiguous);
  EXPECT_EQ(one.bytes, 16u);
  EXPECT_EQ(one.span, 28u); // 7 ints from the first to the end of the last
  // The extent of the vector is 7 ints, so the second one starts right after the first's last int.
  EXPECT_EQ(message_layout(2, every_other).span, 56u);
  MPI_Type_free(&every_other);
}

TEST(MessageLayout, ALowerBoundMovesTheSpanStart) {
  MPI_Datatype shifted;
  const int length = 1;
  const MPI_Aint displacement = 8;
  MPI_Type_create_hindexed(1, &length, &displacement, MPI_DOUBLE, &shifted); // one double at byte 8
  MPI_Type_commit(&shifted);
  const MessageLayout layout = message_layout(1, shifted);
  EXPECT_FALSE(layout.contiguous);
  EXPECT_EQ(layout.span_start, 8);
  EXPECT_EQ(layout.span, 8u);
  EXPECT_EQ(layout.bytes, 8u);
  MPI_Type_free(&shifted);
}

TEST(MessageLayout, EmptyMessagesSpanNothingAndNegativeCountsAreNotSupported) {
  EXPECT_EQ(message_layout(0, MPI_DOUBLE).span, 0u);
  EXPECT_TRUE(message_layout(0, MPI_DOUBLE).supported);
  EXPECT_FALSE(message_layout(-1, MPI_DOUBLE).supported);
}

} // namespace
} // namespace commlens::runtime
