// Int8 quantisation: the scheme of PyTorch's post-training static quantisation with its `onednn`
// engine, and the exact arithmetic every int8 kernel of convlab computes, bit for bit.
//
// Activations: quint8, per tensor, affine: real = scale * (q - zero_point), q in [0, 255].
//   A zero point makes the real 0 exact (padding, ReLU's floor) whatever the range's offset.
// Weights: qint8, per output channel, symmetric: real = weight_scale[k] * q, q in [-128, 127].
//   Per channel: after BatchNorm is folded in, channels' ranges differ by 10x and more, and one
//   scale would leave the small ones a few levels. Symmetric (zero point 0): a weight zero point
//   would add a term sum(x) * zp_w to every output, one more correction per pixel.
// Bias: float, as PyTorch keeps it.
// Accumulation: int32, exact: acc = sum (x_q - x_zero_point) * w_q over C/g x R x S taps. Each
//   term is at most 255 * 128 in magnitude, so kMaxInt8Taps taps can never overflow.
// Requantisation, per output: y = fma(float(acc), multiplier[k], offset[k]) with
//   multiplier = input.scale * weight_scale[k] / output.scale and offset = bias[k] / output.scale;
//   q = saturate(nearbyint(y) + output.zero_point) to [lo, hi].
//   Why this form: one conversion, one FMA and one rounding, which SIMD does in three
//   instructions exactly as the scalar oracle does, so every int8 kernel of ours gives the
//   oracle's bytes. PyTorch computes the same real number with its floats in another order; near a
//   half quantum the two can round apart, which is why comparisons with PyTorch count quanta.
//   nearbyint rounds half to even in the default rounding mode, as SIMD conversions do and as
//   PyTorch does. Saturation, never wrap-around: 300 becomes 255, not 44.
// The activation is a clamp in the quantised domain: ReLU raises lo to the output zero point (the
//   real 0); ReLU6 also lowers hi to zero_point + nearbyint(6 / scale), keeping the conv's output
//   scale and zero point, as PyTorch's quantised ReLU6 does.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/common/kernel.hpp"

namespace convlab {

// |x_q - x_zero_point| <= 255 and |w_q| <= 128: 2^31 / (255 * 128) products fit in an int32.
inline constexpr std::int64_t kMaxInt8Taps = 65793;

struct QuantParams {  // quint8, per tensor
  float scale = 1;
  std::int32_t zero_point = 0;
};

// Throws InputError naming `what` unless the scale is finite and positive and the zero point in
// [0, 255].
void check_quant_params(const QuantParams& q, std::string_view what);

inline std::uint8_t saturate_u8(std::int32_t q) { return static_cast<std::uint8_t>(q < 0 ? 0 : q > 255 ? 255 : q); }

// PyTorch's quantize_per_tensor: nearbyint(x / scale) + zero_point, saturated.
inline std::uint8_t quantize_u8(float x, QuantParams q) {
  const float r = std::nearbyint(x / q.scale);
  if (!(r > -1024.0f)) return r > 0 ? 255 : 0;  // far outside (or NaN): saturates before the int conversion
  return saturate_u8(static_cast<std::int32_t>(std::fmin(r, 1024.0f)) + q.zero_point);
}
inline float dequantize(std::uint8_t q, QuantParams p) { return p.scale * static_cast<float>(q - p.zero_point); }

// A quantised residual add (PyTorch's FloatFunctional add, add_relu) with its own output
// quantisation: y = a_scale * (a - a_zp) + b_scale * (b - b_zp) in units of the output scale
// (scales divided once, in AddRequant), as one fma over the second product (never contracted
// otherwise, the same on every device), rounded half to even, plus the output zero point,
// saturated, and at least `lo` (the output zero point after a ReLU: the real 0). y is clamped to
// +-1024 first: past it every result saturates alike, and the int conversion stays defined.
struct AddRequant {
  float a_scale, b_scale;  // each input's scale over the output's
  std::int32_t a_zero_point, b_zero_point, out_zero_point, lo;
  AddRequant(QuantParams a, QuantParams b, QuantParams out, bool relu)
      : a_scale(a.scale / out.scale), b_scale(b.scale / out.scale), a_zero_point(a.zero_point),
        b_zero_point(b.zero_point), out_zero_point(out.zero_point), lo(relu ? out.zero_point : 0) {}
  std::uint8_t operator()(std::uint8_t a, std::uint8_t b) const {
    const float y = std::fma(a_scale, static_cast<float>(a - a_zero_point), b_scale * static_cast<float>(b - b_zero_point));
    const auto q = static_cast<std::int32_t>(std::nearbyint(std::fmax(std::fmin(y, 1024.0f), -1024.0f)));
    return std::max(saturate_u8(q + out_zero_point), static_cast<std::uint8_t>(lo));
  }
};

// Weights as PyTorch's quantised conv holds them: qint8 K x C/groups x R x S (OIHW), one scale per
// output channel (zero point 0), a float bias (or none); and the input and output quantisation.
struct Int8ConvWeights {
  std::span<const std::int8_t> weight;
  std::span<const float> weight_scale;
  std::span<const float> bias;  // empty: no bias
  QuantParams input, output;
};

// Checks sizes, scales and zero points against the problem; throws InputError naming the bad one.
void check_int8_weights(const ConvProblem& p, const Int8ConvWeights& w);

// The per-output-channel constants of the requantisation above, made once in plan. y is clamped
// to +-kRequantLimit before rounding (any such value saturates anyway): the int conversion of a
// larger float would overflow, and SIMD conversions would give INT_MIN for it.
inline constexpr float kRequantLimit = 65536.0f;

// The requantisation of one accumulator, the definition every kernel's vector form must match.
inline std::int32_t requantize_one(std::int32_t acc, float multiplier, float offset, std::int32_t zero_point,
                                   std::int32_t lo, std::int32_t hi) {
  float y = std::fma(static_cast<float>(acc), multiplier, offset);
  y = std::fmin(std::fmax(y, -kRequantLimit), kRequantLimit);  // far beyond saturation: no int overflow
  const std::int32_t q = static_cast<std::int32_t>(std::nearbyint(y)) + zero_point;
  return q < lo ? lo : q > hi ? hi : q;
}

struct Requantization {
  std::vector<float> multiplier, offset;  // per output channel
  std::int32_t zero_point = 0, lo = 0, hi = 255;

  std::uint8_t operator()(std::int32_t acc, std::int64_t k) const {
    return static_cast<std::uint8_t>(requantize_one(acc, multiplier[k], offset[k], zero_point, lo, hi));
  }
};
Requantization make_requantization(const Int8ConvWeights& w, std::int64_t k, Activation activation);

}  // namespace convlab
