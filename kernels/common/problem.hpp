// ConvProblem: one 2-D convolution forward, described the way oneDNN's benchdnn does.
//
// Descriptor syntax (benchdnn): `g1mb32ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0n"name"`.
// ic, oc and ih (or iw) and kh (or kw) are required; omitted fields take benchdnn's defaults:
// mb 2, g 1, width = height when only the height is given (and vice versa), stride 1,
// padding 0 (or deduced from a given output size), dilation 0. In the text, dilation follows
// benchdnn: dh0 is a dense kernel, dhd puts d zeros between taps. ConvProblem stores PyTorch's
// convention instead (dilation_h = d + 1, the step between taps: 1 = dense), like every kernel;
// only the descriptor parser and printer, and the oneDNN baseline, speak benchdnn's. Tokens may
// be separated by '_'. ph and pw are the top and left padding; the bottom and right padding equal
// them unless a given output size needs more or less (benchdnn's reading of oh with ph: ONNX's
// asymmetric pads, TensorFlow's SAME), e.g. `ic3ih224oc32oh112kh3sh2ph0` pads 0 above, 1 below.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace convlab {

// Limits that keep every size computation of a problem inside std::int64_t: the batch at most
// 2^40, every other field at most 2^24 (so (kh - 1) * dilation and the like stay below 2^48), each
// tensor at most 2^56 elements (its bytes, and the sum of a network's, stay below 2^63).
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 40;
inline constexpr std::int64_t kMaxProblemField = std::int64_t{1} << 24;
inline constexpr double kMaxTensorElems = 72057594037927936.0;  // 2^56

struct ConvProblem {
  std::int64_t n = 2;   // mb: batch
  std::int64_t c = 0;   // ic: input channels
  std::int64_t h = 0;   // ih
  std::int64_t w = 0;   // iw
  std::int64_t k = 0;   // oc: output channels
  std::int64_t r = 1;   // kh: kernel height
  std::int64_t s = 1;   // kw: kernel width
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;  // top and left (and bottom and right, less the deltas below)
  // Bottom padding minus top, right minus left: 0 (symmetric) in every built-in network. Set it
  // with with_end_padding, which keeps it canonical (so that equal convolutions compare equal).
  std::int64_t pad_bottom_delta = 0, pad_right_delta = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;  // PyTorch's: the step between taps, 1 = dense
  std::int64_t groups = 1;
  std::string name;  // optional label (`n"..."`), e.g. "lab-cnn:conv2"

  std::int64_t out_h() const;
  std::int64_t out_w() const;
  std::int64_t pad_bottom() const { return pad_h + pad_bottom_delta; }
  std::int64_t pad_right() const { return pad_w + pad_right_delta; }
  bool has_padding() const { return pad_h != 0 || pad_w != 0 || pad_bottom() != 0 || pad_right() != 0; }
  // The input with its padding materialised, for kernels that copy it into a zeroed buffer: never
  // less than h + 2 pad_h, the symmetric extent their tiles were written for.
  std::int64_t padded_h() const { return h + pad_h + std::max(pad_h, pad_bottom()); }
  std::int64_t padded_w() const { return w + pad_w + std::max(pad_w, pad_right()); }
  std::int64_t c_per_group() const { return c / groups; }
  std::int64_t k_per_group() const { return k / groups; }
  bool is_depthwise() const { return groups > 1 && groups == c && groups == k; }

  std::int64_t input_elems() const { return n * c * h * w; }
  std::int64_t output_elems() const { return n * k * out_h() * out_w(); }
  std::int64_t weight_elems() const { return k * c_per_group() * r * s; }

  // Multiply-adds count 2 FLOPs; bias and epilogue are not counted (benchdnn's convention).
  double flops() const;
  // Compulsory traffic: input, weights, bias and output, each touched once, in FP32.
  double bytes() const;

  // Throws InputError naming the offending field when the problem is not a valid convolution,
  // or one so large that its sizes would overflow (the limits above).
  // `descriptor`: the text the problem was parsed from; errors then quote it as the user wrote
  // it (a problem built in code is printed instead, from its fields).
  void validate(std::string_view descriptor = {}) const;

  // Same problem with another batch size (the network executor plans per batch).
  ConvProblem with_batch(std::int64_t batch) const;
  // Same problem padded `bottom` below and `right` to the right. Canonical: end padding that a
  // stride's floor division leaves unread is dropped, and none is recorded where the symmetric
  // padding gives the same output size.
  ConvProblem with_end_padding(std::int64_t bottom, std::int64_t right) const;

  bool operator==(const ConvProblem&) const = default;
};

// Parses a benchdnn descriptor. Throws InputError naming the offending token.
ConvProblem parse_problem(std::string_view descriptor);

// Prints the short benchdnn form: fields equal to their default are left out, except mb.
// parse_problem(to_string(p)) == p for every valid p.
std::string to_string(const ConvProblem& p);

}  // namespace convlab
