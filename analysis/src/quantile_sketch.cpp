#include "commlens/analysis/quantile_sketch.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace commlens::analysis {
namespace {

constexpr int kMantissaBits = 7;
constexpr std::uint64_t kExact = std::uint64_t{1} << kMantissaBits; // values below are exact

std::uint32_t bucket_of(std::uint64_t value) {
  if (value < kExact)
    return static_cast<std::uint32_t>(value);
  const int exponent = std::bit_width(value) - 1; // >= kMantissaBits
  const int shift = exponent - kMantissaBits;
  const auto mantissa = static_cast<std::uint32_t>((value >> shift) - kExact); // 0..127
  return static_cast<std::uint32_t>(kExact + static_cast<std::uint64_t>(shift) * kExact + mantissa);
}

std::int64_t lower_edge(std::uint32_t bucket) {
  if (bucket < kExact)
    return bucket;
  const auto shift = (bucket - kExact) / kExact;
  const auto mantissa = (bucket - kExact) % kExact;
  return static_cast<std::int64_t>((kExact + mantissa) << shift);
}

} // namespace

void QuantileSketch::add(std::int64_t value) {
  value = std::max<std::int64_t>(value, 0); // clock corrections can make a tiny call negative
  ++buckets_[bucket_of(static_cast<std::uint64_t>(value))];
  ++count_;
  max_ = std::max(max_, value);
}

std::int64_t QuantileSketch::quantile(double fraction) const {
  if (count_ == 0)
    return 0;
  const auto wanted = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (const auto& [bucket, values] : buckets_) {
    seen += values;
    if (seen >= wanted)
      return std::min(lower_edge(bucket), max_);
  }
  return max_;
}

} // namespace commlens::analysis
