#include "kernels/common/quantize.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

void check_quant_params(const QuantParams& q, std::string_view what) {
  if (!(std::isfinite(q.scale) && q.scale > 0))
    throw InputError(fmt::format("{}: scale {} must be finite and positive", what, q.scale));
  if (q.zero_point < 0 || q.zero_point > 255)
    throw InputError(fmt::format("{}: zero point {} is outside quint8's [0, 255]", what, q.zero_point));
}

void check_int8_weights(const ConvProblem& p, const Int8ConvWeights& w) {
  if (p.c_per_group() * p.r * p.s > kMaxInt8Taps)
    throw InputError(fmt::format("{}: {} taps per output could overflow the int32 accumulator (at most {})",
                                 to_string(p), p.c_per_group() * p.r * p.s, kMaxInt8Taps));
  const auto expected = static_cast<std::size_t>(p.weight_elems());
  if (w.weight.size() != expected)
    throw InputError(fmt::format("{}: int8 weight has {} values, the problem needs {} (oc {} x ic/g {} x kh {} x kw {})",
                                 to_string(p), w.weight.size(), expected, p.k, p.c_per_group(), p.r, p.s));
  if (w.weight_scale.size() != static_cast<std::size_t>(p.k))
    throw InputError(fmt::format("{}: weight_scale has {} values, the problem needs {} (one per output channel)",
                                 to_string(p), w.weight_scale.size(), p.k));
  for (std::size_t k = 0; k < w.weight_scale.size(); ++k)
    if (!(std::isfinite(w.weight_scale[k]) && w.weight_scale[k] > 0))
      throw InputError(fmt::format("{}: weight_scale[{}] = {} must be finite and positive", to_string(p), k,
                                   w.weight_scale[k]));
  if (!w.bias.empty() && w.bias.size() != static_cast<std::size_t>(p.k))
    throw InputError(fmt::format("{}: bias has {} values, the problem needs {} (oc)", to_string(p), w.bias.size(), p.k));
  for (std::size_t k = 0; k < w.bias.size(); ++k)
    if (!std::isfinite(w.bias[k]))
      throw InputError(fmt::format("{}: bias[{}] = {} is not finite", to_string(p), k, w.bias[k]));
  check_quant_params(w.input, "input quantisation");
  check_quant_params(w.output, "output quantisation");
}

Requantization make_requantization(const Int8ConvWeights& w, std::int64_t k, Activation activation) {
  Requantization r;
  r.multiplier.resize(static_cast<std::size_t>(k));
  r.offset.resize(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i) {
    r.multiplier[i] = w.input.scale * w.weight_scale[i] / w.output.scale;
    r.offset[i] = w.bias.empty() ? 0.0f : w.bias[i] / w.output.scale;
  }
  r.zero_point = w.output.zero_point;
  if (activation != Activation::none) r.lo = w.output.zero_point;
  if (activation == Activation::relu6)
    r.hi = std::min<std::int32_t>(255, w.output.zero_point + static_cast<std::int32_t>(std::nearbyint(6.0f / w.output.scale)));
  return r;
}

}  // namespace convlab
