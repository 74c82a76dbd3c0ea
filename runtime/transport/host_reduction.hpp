#pragma once
// The runtime's reductions computed on the host, element by element with the operators its kernels
// use (device/reduction_operators.hpp): in the element type (integers promoted, combined, truncated,
// as C does), 16-bit floats widened, combined exactly and rounded once to nearest even, as the GPU's
// half and bfloat16 instructions round. The nonblocking collectives' fallback through node shared
// memory (shared_memory_collectives.hpp) reduces with it. Plain C++.
#include "device/reduction_types.hpp"

#include <cstddef>
#include <cstdint>

namespace commlens::runtime {

// accumulator[i] = op(accumulator[i], operand[i]) for every i < count: the accumulator is the
// left operand, as in the kernels, which fold the ranks' inputs in rank order.
void reduce_into(Reduction reduction, void* accumulator, const void* operand, std::size_t count) noexcept;

// IEEE binary16 and bfloat16 from and to float, rounding to nearest even (exposed for the tests).
float float_from_half(std::uint16_t bits) noexcept;
std::uint16_t half_from_double(double value) noexcept;
float float_from_bfloat16(std::uint16_t bits) noexcept;
std::uint16_t bfloat16_from_double(double value) noexcept;

} // namespace commlens::runtime
