// cpu.22_int8_depthwise: depthwise int8 convolution on tap pairs over whole planes.
//
// Changes against cpu.07_depthwise_rows (its FP32 twin, one channel plane at a time from a padded
// copy): the copy widens to int16 with the zero point subtracted (padding becomes the real 0) and
// pairs each value with its neighbour one tap to the right, so that vpmaddwd does two taps' exact
// int16 products per int32 lane; the copy is split into stride phases (a plane per row and column
// phase), so that every tap, whatever the stride, reads consecutive words; and the outputs are one
// flat row across the plane's rows (a few junk columns per row, never stored) instead of a loop per
// row. The requantisation runs once per output, as the oracle's (kernels/common/quantize.hpp).
// Why faster: a 3x3 tap set is 6 vpmaddwd per vector of outputs instead of 9 int32 multiplies,
// and 8x8 or 16x16 planes (mobilenet's deep layers) make a few long loops instead of many short
// ones whose loop and requantisation overheads dominated.
// Bound: the paired copy (each input twice) and the requantisation and byte stores per output.
// Measured: 0.26-1.0x onednn.conv_int8 on mobilenet-tiny's depthwise layers at batch 32, 1.5-3.6x
// the row-by-row version it replaced (2-core Zen 3 VM, AVX2, 2026-12-01); on a Zen 5 (VNNI, which
// oneDNN uses and this kernel does not) 0.45-0.47x geometric mean at batch 32 (bench/RESULTS.md).
// Run: build/convlab conv --precision int8 --problem g64mb32ic64ih16oc64oh16kh3ph1 --kernel cpu.22_int8_depthwise,onednn.conv_int8 --interleave
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/int8_simd.hpp"

namespace convlab::cpu {

namespace {

using namespace int8;

// Two int16 values in one int32 lane, as vpmaddwd reads them: `first` in the low half.
std::int32_t pack(std::int32_t first, std::int32_t second) {
  return static_cast<std::int32_t>(static_cast<std::uint16_t>(first) | static_cast<std::uint32_t>(static_cast<std::uint16_t>(second)) << 16);
}

class Int8DepthwiseConv final : public PlannedInt8Conv {
 public:
  Int8DepthwiseConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e)
      : p_(p), oh_(p.out_h()), ow_(p.out_w()), hp_(p.padded_h()), wp_(p.padded_w()),
        hq_((hp_ + p.stride_h - 1) / p.stride_h), wq_((wp_ + p.stride_w - 1) / p.stride_w),
        threads_(omp_get_max_threads()), input_zero_point_(w.input.zero_point),
        requantize_(make_requantization(w, p.k, e.activation)) {
    // Where each tap pair reads, relative to an output's flat index y * wq + x: the phase plane of
    // its first tap's row and column, and the row and column offset inside that plane.
    for (std::int64_t r = 0; r < p.r; ++r)
      for (std::int64_t s = 0; s < p.s; s += 2) {
        const std::int64_t row = r * p.dilation_h, col = s * p.dilation_w;
        const std::int64_t phase = row % p.stride_h * p.stride_w + col % p.stride_w;
        offsets_.push_back(phase * phase_words() + row / p.stride_h * wq_ + col / p.stride_w);
      }
    for (std::int64_t c = 0; c < p.k; ++c)
      for (std::int64_t r = 0; r < p.r; ++r)
        for (std::int64_t s = 0; s < p.s; s += 2) {
          const std::int8_t* row = w.weight.data() + (c * p.r + r) * p.s;
          weight_pairs_.push_back(pack(row[s], s + 1 < p.s ? row[s + 1] : 0));
        }
  }

  std::size_t weight_bytes() const override {
    return weight_pairs_.size() * sizeof(std::int32_t) + 2 * requantize_.multiplier.size() * sizeof(float);
  }
  std::size_t workspace_bytes() const override { return static_cast<std::size_t>(threads_) * slot_bytes(); }

  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t nc = 0; nc < p_.n * p_.c; ++nc) {
      auto* slot = reinterpret_cast<std::int32_t*>(static_cast<char*>(workspace) +
                                                  static_cast<std::size_t>(omp_get_thread_num()) * slot_bytes());
      channel(input + nc * p_.h * p_.w, output + nc * oh_ * ow_, nc % p_.c, slot);
    }
  }

 private:
  // A phase plane: hq x wq words, and slack for the last vector's reads past the last row.
  std::int64_t phase_words() const { return hq_ * wq_ + wq_ + (p_.s / 2 + 2) * kLanes; }
  std::int64_t flat() const { return oh_ * wq_; }  // outputs along one flat row of oh x wq
  std::int64_t row16() const { return wp_ + p_.dilation_w; }  // a padded row, and its pairs' partners past it
  // Per thread: the phase planes, one padded int16 row, the requantised flat row.
  std::size_t slot_bytes() const {
    const auto words = static_cast<std::size_t>(p_.stride_h * p_.stride_w * phase_words() + flat() + kLanes);
    return (words * sizeof(std::int32_t) + static_cast<std::size_t>(row16()) * sizeof(std::int16_t) + 63) / 64 * 64;
  }

  void channel(const std::uint8_t* in, std::uint8_t* out, std::int64_t c, std::int32_t* slot) const {
    std::int32_t* planes = slot;
    std::int32_t* q = planes + p_.stride_h * p_.stride_w * phase_words();
    auto* requantized = reinterpret_cast<std::uint8_t*>(q);  // the flat row's outputs, as bytes
    auto* row = reinterpret_cast<std::int16_t*>(q + flat() + kLanes);
    // Phase plane (row phase a, column phase b), word (i, j): the padded input (i sh + a, j sw + b)
    // as value - zero point, paired with its right-hand tap (dilation_w further), 0 outside the image.
    std::fill(planes, planes + p_.stride_h * p_.stride_w * phase_words(), 0);
    std::fill(row, row + row16(), std::int16_t{0});
    for (std::int64_t y = p_.pad_h; y < p_.pad_h + p_.h; ++y) {  // the padding rows stay 0
      const std::uint8_t* src = in + (y - p_.pad_h) * p_.w;
      for (std::int64_t x = 0; x < p_.w; ++x) row[p_.pad_w + x] = static_cast<std::int16_t>(src[x] - input_zero_point_);
      for (std::int64_t b = 0; b < p_.stride_w; ++b) {
        std::int32_t* dst = planes + (y % p_.stride_h * p_.stride_w + b) * phase_words() + y / p_.stride_h * wq_;
        if (p_.stride_w == 1) {  // a unit stride the compiler vectorises
          for (std::int64_t x = 0; x < wp_; ++x) dst[x] = pack(row[x], row[x + p_.dilation_w]);
        } else if (p_.stride_w == 2 && p_.dilation_w == 1) {
          // The pairs (x, x + 1) for x = b, b + 2, ... are the row itself from element b: a copy
          // (the strided loop was a third of the kernel's time on stride-2 layers).
          std::memcpy(dst, row + b, static_cast<std::size_t>((wp_ - b + 1) / 2) * sizeof(std::int32_t));
        } else {
          for (std::int64_t j = 0, x = b; x < wp_; ++j, x += p_.stride_w) dst[j] = pack(row[x], row[x + p_.dilation_w]);
        }
      }
    }
    const std::int32_t* w = weight_pairs_.data() + c * static_cast<std::int64_t>(offsets_.size());
    alignas(64) float multiplier[kLanes], offset[kLanes];
    std::fill_n(multiplier, kLanes, requantize_.multiplier[c]);
    std::fill_n(offset, kLanes, requantize_.offset[c]);
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    for (std::int64_t v = 0; v < flat(); v += kLanes) {
      IVec acc = zero();
      for (std::size_t t = 0; t < offsets_.size(); ++t) acc = madd_add(acc, load(planes + offsets_[t] + v), splat(w[t]));
      requantize_bytes(acc, multiplier, offset, zp, lo, hi, requantized + v);
    }
    // Columns from ow on are junk, computed and dropped: a copy per output row (a byte store per
    // output was an eighth of the kernel's time).
    for (std::int64_t y = 0; y < oh_; ++y)
      std::memcpy(out + y * ow_, requantized + y * wq_, static_cast<std::size_t>(ow_));
  }

  ConvProblem p_;
  std::int64_t oh_, ow_, hp_, wp_, hq_, wq_;
  int threads_;
  std::int32_t input_zero_point_;
  std::vector<std::int64_t> offsets_;      // per tap pair: its first word's offset in the phase planes
  std::vector<std::int32_t> weight_pairs_;  // per channel, per tap pair: pack(w[r][s], w[r][s + 1] or 0)
  Requantization requantize_;
};

}  // namespace

std::string int8_depthwise_unsupported(const ConvProblem& p) {
  if (!p.is_depthwise()) return "depthwise only (groups = input channels = output channels)";
  return {};
}

std::unique_ptr<PlannedInt8Conv> int8_depthwise_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  if (const std::string why = int8_depthwise_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.22_int8_depthwise cannot run {}: {}", to_string(p), why));
  return std::make_unique<Int8DepthwiseConv>(p, w, e);
}

}  // namespace convlab::cpu
