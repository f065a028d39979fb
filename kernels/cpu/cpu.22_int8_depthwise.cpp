// cpu.22_int8_depthwise: depthwise int8 convolution along NCHW rows.
//
// Changes against cpu.07_depthwise_rows (its FP32 twin): the same plan of work, one channel plane
// at a time, copied once into a zero-padded buffer so that no tap tests a bound, then a whole
// output row accumulated tap by tap with the pixels along the vector lanes. Here the copy also
// widens to int16 with the zero point subtracted (padding becomes the real 0), the row's
// accumulators are int32 (exact), and the requantisation runs once per output, as the oracle's.
// Why: a depthwise layer does R x S multiply-adds per output and reads its input plane from
// cache, so it is bound by loads and the epilogue, not by multiplies; the widened copy makes each
// tap one contiguous int16 x constant multiply-add over the row, which compilers vectorise.
// Bound: the plane copy and the requantisation; stride 2 reads every other lane.
// Measured: 6.8 GOP/s, 0.38x onednn.conv_int8 (channels in vector lanes) on g64mb32ic64ih16oc64oh16kh3ph1
// (2-core Zen 3 VM, AVX2, 2026-12-01): small planes leave short rows, where per-row costs weigh.
// Run: build/convlab conv --precision int8 --problem g64mb32ic64ih16oc64oh16kh3ph1 --kernel cpu.22_int8_depthwise,onednn.conv_int8 --interleave
#include <omp.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/int8_simd.hpp"

namespace convlab::cpu {

namespace {

using namespace int8;

class Int8DepthwiseConv final : public PlannedInt8Conv {
 public:
  Int8DepthwiseConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e)
      : p_(p), oh_(p.out_h()), ow_(p.out_w()), hp_(p.h + 2 * p.pad_h), wp_(p.w + 2 * p.pad_w),
        threads_(omp_get_max_threads()), input_zero_point_(w.input.zero_point), weight_(w.weight.begin(), w.weight.end()),
        requantize_(make_requantization(w, p.k, e.activation)) {}

  std::size_t weight_bytes() const override { return weight_.size() + 2 * requantize_.multiplier.size() * sizeof(float); }
  // Per thread: the padded int16 plane and one row of int32 accumulators.
  std::size_t workspace_bytes() const override { return static_cast<std::size_t>(threads_) * slot_bytes(); }

  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t nc = 0; nc < p_.n * p_.c; ++nc) {
      char* slot = static_cast<char*>(workspace) + static_cast<std::size_t>(omp_get_thread_num()) * slot_bytes();
      auto* plane = reinterpret_cast<std::int16_t*>(slot);
      auto* acc = reinterpret_cast<std::int32_t*>(slot + plane_bytes());
      channel(input + nc * p_.h * p_.w, output + nc * oh_ * ow_, nc % p_.c, plane, acc);
    }
  }

 private:
  std::size_t plane_bytes() const { return (static_cast<std::size_t>(hp_ * wp_) * sizeof(std::int16_t) + 63) / 64 * 64; }
  std::int64_t row_lanes() const { return (ow_ + kLanes - 1) / kLanes * kLanes; }  // whole vectors
  std::size_t slot_bytes() const { return plane_bytes() + static_cast<std::size_t>(row_lanes()) * sizeof(std::int32_t); }

  void channel(const std::uint8_t* in, std::uint8_t* out, std::int64_t c, std::int16_t* plane, std::int32_t* acc) const {
    std::fill(plane, plane + hp_ * wp_, std::int16_t{0});
    for (std::int64_t y = 0; y < p_.h; ++y) {
      std::int16_t* row = plane + (y + p_.pad_h) * wp_ + p_.pad_w;
      for (std::int64_t x = 0; x < p_.w; ++x) row[x] = static_cast<std::int16_t>(in[y * p_.w + x] - input_zero_point_);
    }
    const std::int8_t* w = weight_.data() + c * p_.r * p_.s;
    alignas(64) float multiplier[kLanes], offset[kLanes];
    std::fill_n(multiplier, kLanes, requantize_.multiplier[c]);
    std::fill_n(offset, kLanes, requantize_.offset[c]);
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    for (std::int64_t y = 0; y < oh_; ++y) {
      std::fill(acc, acc + row_lanes(), 0);
      for (std::int64_t r = 0; r < p_.r; ++r)
        for (std::int64_t s = 0; s < p_.s; ++s)
          accumulate_tap(plane + (y * p_.stride_h + r * p_.dilation_h) * wp_ + s * p_.dilation_w, w[r * p_.s + s], acc);
      alignas(64) std::int32_t q[kLanes];
      for (std::int64_t x = 0; x < ow_; x += kLanes) {
        requantize(load(acc + x), multiplier, offset, zp, lo, hi, q);
        for (std::int64_t l = 0; l < kLanes && x + l < ow_; ++l) out[y * ow_ + x + l] = static_cast<std::uint8_t>(q[l]);
      }
    }
  }

  // One tap over the output row: acc[x] += src[x * stride] * tap. Unit stride on its own, so the
  // compiler vectorises it (restrict: the plane and the row do not overlap).
  void accumulate_tap(const std::int16_t* __restrict src, std::int32_t tap, std::int32_t* __restrict acc) const {
    if (p_.stride_w == 1) {
      for (std::int64_t x = 0; x < ow_; ++x) acc[x] += src[x] * tap;
    } else {
      for (std::int64_t x = 0; x < ow_; ++x) acc[x] += src[x * p_.stride_w] * tap;
    }
  }

  ConvProblem p_;
  std::int64_t oh_, ow_, hp_, wp_;
  int threads_;
  std::int32_t input_zero_point_;
  std::vector<std::int8_t> weight_;
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
