// The tolerances `convlab validate` judges a kernel by, in one place, with the reasons.
//
// Errors are judged relative to the reference's magnitude, never only in absolute terms: a layer
// whose values are around 1e3 and one around 1e-3 must be held to the same standard.
//
// normalised error ||got - expect||_2 / ||expect||_2 <= kNormalisedError * sqrt(error_scale)
//   FP32 dot products of length m (here at most 64*3*3 + 1 = 577) have a worst-case relative
//   error of gamma_m ~ m * 2^-24 ~ 3.4e-5 against sum|x*w|, but rounding errors of many terms
//   add up like a random walk, ~ sqrt(m) * 2^-24 ~ 1.4e-6, and the normalised error is such an
//   average. PyTorch and convlab sum in different orders and fold BatchNorm at different times.
//   On the CPU each layer is judged run alone on the reference's own inputs, so only its own
//   rounding differs: observed 8e-8..1.4e-6 (the four lab networks, resnet18, mobilenet-v2).
//   Through a whole network the differences compound: the chained error (reported) reaches 1.2e-6
//   on the lab networks and 1.3e-5 after mobilenet-v2's 52 convs, so a bound on it would have to
//   grow with depth. GPU kernels are judged on the chained run (their plans fuse layers) of the
//   lab networks (at most 15 layers). 1e-5 leaves a margin of about ten over the worst seen, yet
//   fails small real bugs: flipping the sign of one of the 18 432 weights of resnet8's
//   layer3.0.conv1 gives 1.8e-3 there.
// max abs error <= kPeakFraction * sqrt(error_scale) * max|expect| (per layer)
//   The normalised error can hide a few wrong elements in a large tensor; this bounds each one
//   against the layer's peak. Observed: at most 1.7e-6 of the peak; 1e-4 keeps a margin of 50.
// error_scale comes from the kernel's list entry (kernels/*/..._kernels.inc): 1 for kernels that
//   only reorder the FP32 sum; larger for Winograd (its transforms amplify rounding) or reduced
//   precision, with the reason beside that entry. It scales a worst-case per-output bound, which
//   grows with the sum of |terms|; a typical (root-mean-square) error grows with the root of the
//   sum of their squares, so both tolerances are given sqrt(error_scale) more room. E.g.
//   Winograd F(4x4,3x3), error_scale 436: tolerance 2.1e-4, observed 1.5e-6; the full factor
//   (4.4e-2) would let a corrupted weight pass.
// top-1 agreement: the predicted class must match unless the reference's own top-2 margin is
//   within twice the logits' max abs bound (a near tie may legitimately flip).
// max relative error |got - expect| / |expect| is reported but not judged: near zero (after ReLU
//   most values are) it is unbounded for any correct kernel. It is taken over elements with
//   |expect| >= 1% of the layer's peak.
#pragma once

#include <cmath>

namespace convlab {

inline constexpr double kNormalisedError = 1e-5;
inline constexpr double kPeakFraction = 1e-4;
inline constexpr double kRelativeErrorFloor = 1e-2;  // max rel error ignores |expect| below this x peak

// int8 (`validate --precision int8`, bench/check/validate_int8.hpp) counts quanta of each layer's
// output scale, judged with each layer run on the reference's own input bytes:
// max |got - expect| <= kInt8Quanta quanta
//   Both sides accumulate the same integers exactly (int32); they compute the same real number
//   from the sum with floats in another order (ours: fma(acc, multiplier, bias / scale), see
//   kernels/common/quantize.hpp; QNNPACK rounds the bias into the int32 sum first; oneDNN has its
//   own order). A value within a few float ulps of a half quantum can round to either neighbour:
//   one quantum, never two. Observed on the four networks against PyTorch 1.13: 1 quantum on
//   0.01-0.1% of a conv layer's elements. A flipped weight moves its channel by tens of quanta.
// share of elements one quantum apart <= kInt8OffShare
//   Catches an arithmetic error that stays within a quantum but is systematic (truncating instead
//   of rounding puts about half the elements one apart). Ties in averaging pools are legitimate:
//   a mean of k values falls on a half about once in k, and libraries break ties differently
//   (ours: to even); observed up to 2.3% on mobilenet-tiny's 8x8 global average pool. One element
//   may always be a quantum apart: of a batch's 10 logits it is 10%.
// Through the whole network, one-quantum differences feed the next layers and grow: observed up to
//   10 quanta after 12 layers (mobilenet-tiny) and 76% of the logits one apart. That drift is reported, not judged;
//   the logits are judged by top-1 agreement, a flip allowed only where the reference's top-2
//   margin is within kInt8ChainedTieQuanta quanta of the output scale (observed drift in the logits: 6).
inline constexpr double kInt8Quanta = 1;
inline constexpr double kInt8OffShare = 0.05;
inline constexpr double kInt8ChainedTieQuanta = 8;

struct Tolerance {
  double normalised = kNormalisedError;
  double peak_fraction = kPeakFraction;
  double quanta = 0;     // int8: max |got - expect| in quanta of the layer's output scale; 0 for FP32
  double off_share = 0;  // int8: the largest share of elements a quantum apart
};

inline Tolerance tolerance_for(double error_scale) {
  const double room = std::sqrt(error_scale < 1.0 ? 1.0 : error_scale);
  return {kNormalisedError * room, kPeakFraction * room};
}

}  // namespace convlab
