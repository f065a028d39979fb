// Synthetic data for timing and testing int8 kernels on a single convolution (`conv --precision
// int8`): seeded quint8 input, qint8 weights with per-channel scales, a float bias, and an output
// quantisation sized to the output's spread, so that results use the whole [0, 255] range and
// saturate only in the tails (a kernel that saturated everything would match the oracle trivially).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/common/quantize.hpp"

namespace convlab {

struct Int8ConvData {
  std::vector<std::uint8_t> input;
  std::vector<std::int8_t> weight;
  std::vector<float> weight_scale, bias;
  QuantParams input_q, output_q;

  Int8ConvWeights weights() const { return {weight, weight_scale, bias, input_q, output_q}; }
};

Int8ConvData make_int8_conv_data(const ConvProblem& p, std::uint64_t seed);

}  // namespace convlab
