#include "commlens/analysis/size_bin.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>

namespace commlens::analysis {

std::string binary_size(std::uint64_t bytes) {
  static constexpr std::array kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t unit = 0;
  std::uint64_t whole = bytes;
  while (whole >= 1024 && unit + 1 < kUnits.size()) {
    whole /= 1024;
    ++unit;
  }
  const std::uint64_t unit_bytes = std::uint64_t{1} << (10 * unit);
  if (bytes % unit_bytes == 0)
    return fmt::format("{}{}", bytes / unit_bytes, kUnits[unit]);
  return fmt::format("{:.1f}{}", static_cast<double>(bytes) / static_cast<double>(unit_bytes), kUnits[unit]);
}

std::string size_bin_label(int size_bin) {
  if (size_bin < 0)
    return "0B";
  const auto lower = std::uint64_t{1} << size_bin;
  // The upper bound of bin 63 does not fit 64 bits; it is 16EiB.
  const std::string upper = size_bin >= 63 ? "16EiB" : binary_size(lower << 1);
  return fmt::format("[{}, {})", binary_size(lower), upper);
}

std::string size_bin_key(int size_bin) {
  return size_bin < 0 ? "0" : fmt::format("2^{}", size_bin);
}

std::string size_bin_label_of_key(std::string_view key) {
  if (key == "0")
    return size_bin_label(kZeroBytesBin);
  int exponent = -1;
  if (key.starts_with("2^")) {
    const auto digits = key.substr(2);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), exponent);
    if (error == std::errc{} && end == digits.data() + digits.size() && exponent >= 0 && exponent < 64)
      return size_bin_label(exponent);
  }
  return std::string(key);
}

} // namespace commlens::analysis
