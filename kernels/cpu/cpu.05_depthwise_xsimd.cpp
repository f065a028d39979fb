// cpu.05_depthwise_xsimd: depthwise convolution (groups == C == K), vectorised along output width.
//
// What it changes: cpu.00 to cpu.04 treat a depthwise layer as C tiny convolutions with one input
// channel each, so a GEMM (cpu.01) sees a 1 x R*S by R*S x OH*OW product per group: nothing to
// block, all overhead. Here each output row is computed SIMD-vector by SIMD-vector: a register
// accumulator holds batch<float>::size adjacent outputs, every tap (i, j) adds one broadcast weight
// times one vector of input pixels (a contiguous load at stride 1, a gather at stride > 1), and
// the bias and activation are applied before the single store. The interior's tail is one more
// vector overlapping the previous one. Border columns, whose taps reach into the padding (and rows
// narrower than a vector), take a scalar path with the same fused multiply-adds in the same tap
// order, so on FMA hardware every output is rounded the same whichever path computes it.
// Why it should be faster: no im2col copy and no per-group GEMM call; the input row is reused from
// L1 by all S taps, and the output is written once.
// Expected bound: memory-bound. A 3x3 depthwise layer does 9 multiply-adds per output (18 FLOP per
// 8 bytes of input + output), far below the ~30 FLOP/byte the machine needs to be compute-bound;
// expect the memory or L2 bandwidth of the machine, i.e. a few to ~15% of the FP32 peak.
// Deterministic: each output is summed by one thread in a fixed tap order (OpenMP over
// batch x channels x output rows), whatever the thread count.
// Benchmark: build/convlab run --model lab-cnn --kernel cpu.05_depthwise_xsimd --batch 1,32
// (lab-cnn has no depthwise layer, so that command reports the kernel as unsupported; time a
// depthwise problem such as g64mb32ic64ih56oc64oh56kh3ph1 instead.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <xsimd/xsimd.hpp>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab::cpu {

namespace {

using Vec = xsimd::batch<float>;
using IndexVec = xsimd::batch<std::int32_t>;
constexpr std::int64_t kLanes = Vec::size;
static_assert(IndexVec::size == Vec::size, "the gather needs one 32-bit index per float lane");

Vec activate_vec(Activation a, Vec x) {
  if (a == Activation::none) return x;
  x = xsimd::max(x, Vec(0.0f));
  return a == Activation::relu6 ? xsimd::min(x, Vec(6.0f)) : x;
}

class DepthwiseConv final : public PlannedConv {
 public:
  DepthwiseConv(const ConvProblem& p, const ConvWeights& w, Epilogue e)
      : p_(p), weight_(w.weight.begin(), w.weight.end()), bias_(w.bias.begin(), w.bias.end()), epilogue_(e) {
    if (bias_.empty()) bias_.assign(static_cast<std::size_t>(p.k), 0.0f);
    const std::int64_t ow = p.out_w(), dw = p.dilation_w + 1;
    // Output columns whose taps all fall inside the input row: [interior_begin_, interior_end_).
    interior_begin_ = std::min(ow, (p.pad_w + p.stride_w - 1) / p.stride_w);
    const std::int64_t last_reach = p.w - 1 + p.pad_w - (p.s - 1) * dw;  // x * stride_w <= last_reach
    interior_end_ = last_reach < 0 ? 0 : std::min(ow, last_reach / p.stride_w + 1);
    interior_end_ = std::max(interior_end_, interior_begin_);
  }

  std::size_t weight_bytes() const override { return (weight_.size() + bias_.size()) * sizeof(float); }

  void run(const float* input, float* output, void*) const override {
    const ConvProblem& p = p_;
    const std::int64_t oh = p.out_h();
#pragma omp parallel for collapse(3) schedule(static)
    for (std::int64_t n = 0; n < p.n; ++n)
      for (std::int64_t c = 0; c < p.c; ++c)
        for (std::int64_t y = 0; y < oh; ++y) row(input + (n * p.c + c) * p.h * p.w, c, y,
                                                  output + ((n * p.k + c) * oh + y) * p.out_w());
  }

 private:
  // Input rows (tap rows i) that output row y reads, as [i_begin, i_end): taps above or below the
  // image read zero padding and are skipped.
  void tap_rows(std::int64_t y, std::int64_t& i_begin, std::int64_t& i_end) const {
    const std::int64_t dh = p_.dilation_h + 1, top = y * p_.stride_h - p_.pad_h;
    i_begin = top >= 0 ? 0 : (-top + dh - 1) / dh;
    i_end = std::min(p_.r, top < p_.h ? (p_.h - 1 - top) / dh + 1 : 0);
  }

  void row(const float* plane, std::int64_t c, std::int64_t y, float* out) const {
    const ConvProblem& p = p_;
    const std::int64_t dh = p.dilation_h + 1, dw = p.dilation_w + 1;
    const std::int64_t top = y * p.stride_h - p.pad_h;
    std::int64_t i_begin = 0, i_end = 0;
    tap_rows(y, i_begin, i_end);
    const float* wc = weight_.data() + c * p.r * p.s;
    const float bias = bias_[static_cast<std::size_t>(c)];

    // One output column, scalar, with the same fma order as the vector path.
    auto scalar = [&](std::int64_t x) {
      float acc = bias;
      for (std::int64_t i = i_begin; i < i_end; ++i) {
        const float* in_row = plane + (top + i * dh) * p.w;
        for (std::int64_t j = 0; j < p.s; ++j) {
          const std::int64_t ix = x * p.stride_w - p.pad_w + j * dw;
          if (ix >= 0 && ix < p.w) acc = std::fma(in_row[ix], wc[i * p.s + j], acc);
        }
      }
      out[x] = activate(epilogue_.activation, acc);
    };

    // Lane offsets of a strided load: lane l reads input column (x + l) * stride_w.
    alignas(64) std::int32_t lane_offsets[kLanes];
    for (std::int64_t l = 0; l < kLanes; ++l) lane_offsets[l] = static_cast<std::int32_t>(l * p.stride_w);
    const IndexVec gather_index = IndexVec::load_aligned(lane_offsets);

    // kLanes adjacent output columns starting at x, all of whose taps are inside the row.
    auto vector = [&](std::int64_t x) {
      Vec acc(bias);
      for (std::int64_t i = i_begin; i < i_end; ++i) {
        const float* in = plane + (top + i * dh) * p.w + x * p.stride_w - p.pad_w;
        for (std::int64_t j = 0; j < p.s; ++j) {
          const Vec pixels =
              p.stride_w == 1 ? Vec::load_unaligned(in + j * dw) : Vec::gather(in + j * dw, gather_index);
          acc = xsimd::fma(pixels, Vec(wc[i * p.s + j]), acc);
        }
      }
      activate_vec(epilogue_.activation, acc).store_unaligned(out + x);
    };

    std::int64_t x = 0;
    for (; x < interior_begin_; ++x) scalar(x);
    for (; x + kLanes <= interior_end_; x += kLanes) vector(x);
    // The interior's tail: one more vector ending at the interior's end, overlapping columns
    // already written with the same bits, instead of up to kLanes-1 scalar columns.
    if (x < interior_end_ && interior_end_ - interior_begin_ >= kLanes) {
      vector(interior_end_ - kLanes);
      x = interior_end_;
    }
    for (; x < p.out_w(); ++x) scalar(x);
  }

  ConvProblem p_;
  std::vector<float> weight_, bias_;  // weight: C x R x S, as PyTorch stores a depthwise layer
  Epilogue epilogue_;
  std::int64_t interior_begin_ = 0, interior_end_ = 0;
};

}  // namespace

std::string depthwise_xsimd_unsupported(const ConvProblem& p) {
  if (!p.is_depthwise())
    return fmt::format("depthwise only: needs groups == ic == oc (channel multiplier 1), got g{} ic{} oc{}",
                       p.groups, p.c, p.k);
  return {};
}

std::unique_ptr<PlannedConv> depthwise_xsimd_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  if (std::string why = depthwise_xsimd_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.05_depthwise_xsimd does not support {}: {}", to_string(p), why));
  check_weights(p, w);
  return std::make_unique<DepthwiseConv>(p, w, e);
}

}  // namespace convlab::cpu
