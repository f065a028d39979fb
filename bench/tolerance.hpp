// The tolerances `convlab validate` judges a kernel by, in one place, with the reasons.
//
// Errors are judged relative to the reference's magnitude, never only in absolute terms: a layer
// whose values are around 1e3 and one around 1e-3 must be held to the same standard.
//
// normalised error ||got - expect||_2 / ||expect||_2 <= kNormalisedError * error_scale
//   FP32 dot products of length m (here at most 64*3*3 + 1 = 577) have a worst-case relative
//   error of gamma_m ~ m * 2^-24 ~ 3.4e-5 against sum|x*w|, and a typical one of sqrt(m) * 2^-24
//   ~ 1.4e-6. PyTorch and convlab sum in different orders, fold BatchNorm at different times and
//   the difference passes through up to ~15 layers; observed errors are 1e-7..1e-6 (README). 1e-4
//   leaves two orders of magnitude of headroom and still fails a small real bug: flipping the
//   sign of one of the 18 432 weights of resnet8's layer3.0.conv1 gives 1.8e-3 at that layer.
// max abs error <= kPeakFraction * error_scale * max|expect| (per layer)
//   The normalised error can hide a few wrong elements in a large tensor; this bounds each one
//   against the layer's peak. 1e-3: an element off by a thousandth of the layer's largest value.
// top-1 agreement: the predicted class must match unless the reference's own top-2 margin is
//   within the logits' error bound (a near tie may legitimately flip).
// max relative error |got - expect| / |expect| is reported but not judged: near zero (after ReLU
//   most values are) it is unbounded for any correct kernel. It is taken over elements with
//   |expect| >= 1% of the layer's peak.
// error_scale comes from the kernel's list entry (kernels/*/..._kernels.inc): 1 for kernels that
// only reorder the FP32 sum; larger for Winograd (its transforms amplify rounding) or reduced
// precision, with the reason written beside that entry.
#pragma once

namespace convlab {

inline constexpr double kNormalisedError = 1e-4;
inline constexpr double kPeakFraction = 1e-3;
inline constexpr double kRelativeErrorFloor = 1e-2;  // max rel error ignores |expect| below this x peak

struct Tolerance {
  double normalised = kNormalisedError;
  double peak_fraction = kPeakFraction;
};

inline Tolerance tolerance_for(double error_scale) {
  return {kNormalisedError * error_scale, kPeakFraction * error_scale};
}

}  // namespace convlab
