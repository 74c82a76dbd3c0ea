#include "transport/host_reduction.hpp"

#include "device/reduction_operators.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace commlens::runtime {

namespace {

// `value` rounded to nearest even at `significant_bits` bits, with a quantum no finer than
// 2^min_exponent (the format's subnormals); exact in double, so later conversions do not round.
double round_to_bits(double value, int significant_bits, int min_exponent) noexcept {
  if (!std::isfinite(value) || value == 0.0) {
    return value;
  }
  int exponent = 0;
  std::frexp(value, &exponent); // value = m 2^exponent, 0.5 <= |m| < 1
  const int quantum = std::max(exponent - significant_bits, min_exponent);
  return std::ldexp(std::nearbyint(std::ldexp(value, -quantum)), quantum);
}

// A float that half precision holds exactly (or is out of its range: infinity), to its bits.
std::uint16_t half_from_exact_float(float value) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
  const std::uint32_t magnitude = bits & 0x7fffffffU;
  if (magnitude > 0x7f800000U) {
    return sign | 0x7e00U; // NaN
  }
  if (magnitude >= 0x47800000U) {
    return sign | 0x7c00U; // 65536 and above: infinity
  }
  if (magnitude < 0x38800000U) { // below 2^-14: subnormal, a multiple of 2^-24
    return sign | static_cast<std::uint16_t>(std::ldexp(std::fabs(value), 24));
  }
  return sign | static_cast<std::uint16_t>((magnitude - 0x38000000U) >> 13);
}

template <typename T, typename Operator>
void fold(void* accumulator, const void* operand, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) { // memcpy: the buffers need not be aligned to T
    T a;
    T b;
    std::memcpy(&a, static_cast<const char*>(accumulator) + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const char*>(operand) + i * sizeof(T), sizeof(T));
    const T result = Operator::apply(a, b);
    std::memcpy(static_cast<char*>(accumulator) + i * sizeof(T), &result, sizeof(T));
  }
}

// An operator T does not take leaves the accumulator as it is.
template <typename T>
void reduce_typed(ReduceOp op, void* accumulator, const void* operand, std::size_t count) {
  operators::visit_operator<operators::operator_set_of<T>()>(
      op,
      [&](auto operation) {
        fold<T, decltype(operation)>(accumulator, operand, count);
        return true;
      },
      false);
}

// 16-bit floats: the sum or product of two is exact in double, so one rounding gives the correctly
// rounded result the GPU's instructions give; min and max keep the selected operand's bits.
template <float (*Widen)(std::uint16_t), std::uint16_t (*Narrow)(double), typename Operator>
void fold_16bit(void* accumulator, const void* operand, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t a_bits;
    std::uint16_t b_bits;
    std::memcpy(&a_bits, static_cast<const char*>(accumulator) + 2 * i, 2);
    std::memcpy(&b_bits, static_cast<const char*>(operand) + 2 * i, 2);
    const double a = Widen(a_bits);
    const double b = Widen(b_bits);
    std::uint16_t result;
    if constexpr (std::is_same_v<Operator, operators::Min> || std::is_same_v<Operator, operators::Max>) {
      result = Operator::takes_right(a, b) ? b_bits : a_bits;
    } else {
      result = Narrow(Operator::apply(a, b));
    }
    std::memcpy(static_cast<char*>(accumulator) + 2 * i, &result, 2);
  }
}

// The host's stand-ins for the 16-bit float types: how their bits widen to float and narrow back.
struct HalfBits {
  static constexpr auto widen = float_from_half;
  static constexpr auto narrow = half_from_double;
};
struct BFloat16Bits {
  static constexpr auto widen = float_from_bfloat16;
  static constexpr auto narrow = bfloat16_from_double;
};

// MPI defines only the arithmetic ops and min/max on 16-bit floats (op_applies).
template <typename Bits>
void reduce_16bit(ReduceOp op, void* accumulator, const void* operand, std::size_t count) {
  operators::visit_operator<operators::OperatorSet::Float16>(
      op,
      [&](auto operation) {
        fold_16bit<Bits::widen, Bits::narrow, decltype(operation)>(accumulator, operand, count);
        return true;
      },
      false);
}

} // namespace

float float_from_half(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fU;
  const std::uint32_t mantissa = bits & 0x3ffU;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    return std::bit_cast<float>(sign | 0x7f800000U | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t half_from_double(double value) noexcept {
  if (std::isnan(value)) {
    return std::signbit(value) ? 0xfe00U : 0x7e00U;
  }
  return half_from_exact_float(static_cast<float>(round_to_bits(value, 11, -24)));
}

float float_from_bfloat16(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t bfloat16_from_double(double value) noexcept {
  if (std::isnan(value)) {
    return std::signbit(value) ? 0xffc0U : 0x7fc0U;
  }
  const double rounded = round_to_bits(value, 8, -133);
  // Beyond bfloat16's largest finite value (float's exponent range, 8 bits): infinity.
  if (std::fabs(rounded) >= 0x1p128) {
    return std::signbit(rounded) ? 0xff80U : 0x7f80U;
  }
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(rounded)) >> 16);
}

void reduce_into(Reduction reduction, void* accumulator, const void* operand, std::size_t count) noexcept {
  operators::visit_element_type<HalfBits, BFloat16Bits>(
      reduction.type,
      [&](auto element) {
        using T = typename decltype(element)::type;
        if constexpr (decltype(element)::operators == operators::OperatorSet::Float16) {
          reduce_16bit<T>(reduction.op, accumulator, operand, count);
        } else {
          reduce_typed<T>(reduction.op, accumulator, operand, count);
        }
        return true;
      },
      false);
}

} // namespace commlens::runtime
