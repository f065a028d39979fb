// cpu.20_int8_reference: the int8 oracle.
//
// What it is: the quantised convolution's definition as loops, one output at a time: exact int32
// accumulation of (x_q - zero point) * w_q, then kernels/common/quantize.hpp's requantisation.
// Every stride, padding, dilation and group combination. Every other int8 kernel is checked
// against it byte for byte (ours) or within a quantum (libraries that order the float operations
// of the requantisation their own way).
// Why it is slow: index arithmetic and a bounds test per tap, one dependent add per multiply,
// nothing reused from registers: latency-bound, like cpu.00_reference.
// Measured: 1.7 GOP/s on mb1ic64ih56oc64oh56kh3ph1 (2-core Zen 3 VM, AVX2, 2026-12-01).
// Run: build/convlab conv --precision int8 --problem mb1ic16ih32oc16oh32kh3ph1 --kernel cpu.20_int8_reference
#include <vector>

#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/reference.hpp"

namespace convlab::cpu {

std::int32_t int8_reference_accumulator(const ConvProblem& p, const std::uint8_t* input,
                                        std::span<const std::int8_t> weight, std::int32_t input_zero_point,
                                        std::int64_t n, std::int64_t k, std::int64_t y, std::int64_t x) {
  const std::int64_t cg = p.c_per_group(), g = k / p.k_per_group();
  const std::int8_t* wk = weight.data() + k * cg * p.r * p.s;
  std::int32_t acc = 0;
  for (std::int64_t c = 0; c < cg; ++c) {
    const std::uint8_t* in = input + (n * p.c + g * cg + c) * p.h * p.w;
    for (std::int64_t i = 0; i < p.r; ++i) {
      const std::int64_t iy = y * p.stride_h - p.pad_h + i * p.dilation_h;
      if (iy < 0 || iy >= p.h) continue;
      for (std::int64_t j = 0; j < p.s; ++j) {
        const std::int64_t ix = x * p.stride_w - p.pad_w + j * p.dilation_w;
        if (ix < 0 || ix >= p.w) continue;
        acc += (static_cast<std::int32_t>(in[iy * p.w + ix]) - input_zero_point) * wk[(c * p.r + i) * p.s + j];
      }
    }
  }
  return acc;
}

namespace {

class Int8ReferenceConv final : public PlannedInt8Conv {
 public:
  Int8ReferenceConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e)
      : p_(p), weight_(w.weight.begin(), w.weight.end()), input_zero_point_(w.input.zero_point),
        requantize_(make_requantization(w, p.k, e.activation)) {}

  std::size_t weight_bytes() const override { return weight_.size() + 2 * requantize_.multiplier.size() * sizeof(float); }

  void run(const std::uint8_t* input, std::uint8_t* output, void*) const override {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w();
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t n = 0; n < p_.n; ++n)
      for (std::int64_t k = 0; k < p_.k; ++k) {
        std::uint8_t* out = output + (n * p_.k + k) * oh * ow;
        for (std::int64_t y = 0; y < oh; ++y)
          for (std::int64_t x = 0; x < ow; ++x)
            out[y * ow + x] = requantize_(int8_reference_accumulator(p_, input, weight_, input_zero_point_, n, k, y, x), k);
      }
  }

 private:
  ConvProblem p_;
  std::vector<std::int8_t> weight_;
  std::int32_t input_zero_point_;
  Requantization requantize_;
};

}  // namespace

std::string int8_reference_unsupported(const ConvProblem&) { return {}; }

std::unique_ptr<PlannedInt8Conv> int8_reference_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  return std::make_unique<Int8ReferenceConv>(p, w, e);
}

}  // namespace convlab::cpu
