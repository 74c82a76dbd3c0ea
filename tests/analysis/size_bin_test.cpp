#include "commlens/analysis/size_bin.hpp"

#include <gtest/gtest.h>

namespace commlens::analysis {
namespace {

TEST(SizeBin, ZeroByteBinHasItsOwnKeyAndLabel) {
  EXPECT_EQ(size_bin_key(kZeroBytesBin), "0");
  EXPECT_EQ(size_bin_label(kZeroBytesBin), "0B");
}

TEST(SizeBin, KeysArePowersOfTwo) {
  EXPECT_EQ(size_bin_key(0), "2^0");
  EXPECT_EQ(size_bin_key(10), "2^10");
  EXPECT_EQ(size_bin_key(63), "2^63");
}

TEST(SizeBin, LabelsAreHalfOpenRangesInBinaryUnits) {
  EXPECT_EQ(size_bin_label(0), "[1B, 2B)");
  EXPECT_EQ(size_bin_label(9), "[512B, 1KiB)");
  EXPECT_EQ(size_bin_label(10), "[1KiB, 2KiB)");
  EXPECT_EQ(size_bin_label(20), "[1MiB, 2MiB)");
  EXPECT_EQ(size_bin_label(62), "[4EiB, 8EiB)");
  EXPECT_EQ(size_bin_label(63), "[8EiB, 16EiB)");
}

TEST(SizeBin, BinarySizeIsExactForPowersOfTwoAndRoundedOtherwise) {
  EXPECT_EQ(binary_size(0), "0B");
  EXPECT_EQ(binary_size(1023), "1023B");
  EXPECT_EQ(binary_size(1536), "1.5KiB");
  EXPECT_EQ(binary_size(std::uint64_t{3} << 30), "3GiB");
}

} // namespace
} // namespace commlens::analysis
