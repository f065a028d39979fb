#include "bench/harness/int8_conv_data.hpp"

#include <algorithm>
#include <cmath>

#include "models/network.hpp"

namespace convlab {

Int8ConvData make_int8_conv_data(const ConvProblem& p, std::uint64_t seed, bool full_range) {
  Int8ConvData d;
  std::vector<float> u(static_cast<std::size_t>(std::max({p.input_elems(), p.weight_elems(), 2 * p.k})));
  // Input: the reals in [-2, 2), zero point 128; or [-1, 1), zero point 64, over 7 bits.
  d.input_q = full_range ? QuantParams{.scale = 1.0f / 64, .zero_point = 128} : QuantParams{.scale = 1.0f / 64, .zero_point = 64};
  const float input_range = full_range ? 2.0f : 1.0f;
  fill_uniform(std::span(u).first(static_cast<std::size_t>(p.input_elems())), seed, 11);
  d.input.resize(static_cast<std::size_t>(p.input_elems()));
  const std::uint8_t input_max = full_range ? 255 : 127;  // 64 x u can round up to 64: 128 without this
  for (std::size_t i = 0; i < d.input.size(); ++i) d.input[i] = std::min(quantize_u8(input_range * u[i], d.input_q), input_max);
  // Weights: the whole qint8 range; scales differing by channel, as after BatchNorm folding.
  fill_uniform(std::span(u).first(static_cast<std::size_t>(p.weight_elems())), seed, 12);
  d.weight.resize(static_cast<std::size_t>(p.weight_elems()));
  for (std::size_t i = 0; i < d.weight.size(); ++i) d.weight[i] = static_cast<std::int8_t>(std::nearbyint(127.0f * u[i]));
  fill_uniform(std::span(u).first(static_cast<std::size_t>(2 * p.k)), seed, 13);
  const double taps = static_cast<double>(p.c_per_group() * p.r * p.s);
  // A real output's standard deviation: sqrt(taps) x std(x) (range / sqrt 3) x std(w) (~0.75 / sqrt 3).
  const double spread = std::sqrt(taps) * 0.25 * input_range;
  for (std::int64_t k = 0; k < p.k; ++k) {
    d.weight_scale.push_back(static_cast<float>((0.5 + 0.5 * std::fabs(u[k])) / 127));
    d.bias.push_back(static_cast<float>(0.5 * spread * u[p.k + k]));
  }
  // Output: +-4 standard deviations over the 256 levels, zero point in the middle.
  d.output_q = {.scale = static_cast<float>(8 * spread / 255), .zero_point = 128};
  return d;
}

}  // namespace convlab
