// Synthetic data for timing and testing int8 kernels on a single convolution (`conv --precision
// int8`): seeded quint8 input, qint8 weights with per-channel scales, a float bias, and an output
// quantisation sized to the output's spread, so that results use the whole [0, 255] range and
// saturate only in the tails (a kernel that saturated everything would match the oracle trivially).
// The input uses 7 bits, [0, 127] (PyTorch's reduce_range) unless full_range: without VNNI, oneDNN
// multiplies u8 x s8 with vpmaddubsw, whose int16 pair sums saturate above 32767 (255 x 127 x 2
// does; 127 x 128 x 2 does not), and its results then differ from the exact ones by tens of quanta
// (measured on a Zen 3 with AVX2). Our kernels are exact on the full range: tests use both.
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

Int8ConvData make_int8_conv_data(const ConvProblem& p, std::uint64_t seed, bool full_range = false);

}  // namespace convlab
