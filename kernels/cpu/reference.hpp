// The oracle's definition of one output element, shared by cpu.00_reference (which evaluates it
// everywhere) and by checks that sample a few outputs of problems too large to compute whole.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/common/kernel.hpp"

namespace convlab::cpu {

// Output (n, k, y, x) of conv + bias + activation, accumulated in double. weight is OIHW.
double reference_output(const ConvProblem& p, const float* input, std::span<const float> weight,
                        std::span<const float> bias, Activation activation, std::int64_t n, std::int64_t k,
                        std::int64_t y, std::int64_t x);

}  // namespace convlab::cpu

namespace convlab::cpu {

// The int8 oracle's accumulator for output (n, k, y, x): sum (x_q - input_zero_point) * w_q in
// int32, exact (kernels/common/quantize.hpp); padding contributes nothing (it is the real 0).
std::int32_t int8_reference_accumulator(const ConvProblem& p, const std::uint8_t* input,
                                        std::span<const std::int8_t> weight, std::int32_t input_zero_point,
                                        std::int64_t n, std::int64_t k, std::int64_t y, std::int64_t x);

}  // namespace convlab::cpu
