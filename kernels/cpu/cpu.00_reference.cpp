// cpu.00_reference: the oracle.
//
// What it is: the convolution's definition as loops, one output at a time, accumulated in
// double; every stride, padding, dilation and group combination. Every other kernel, on every
// backend, is checked against it: double accumulation makes its result the exactly rounded FP32
// answer for all practical purposes, so the error a fast kernel shows against it is its own.
// Why it is slow: one dependent double add per multiply, index arithmetic per tap, no reuse of
// anything loaded: latency-bound. Threads over batch x output channels do not change the result
// (each output is summed by one thread in a fixed order).
// Bound: a few % of the FP32 peak.
// Measured: 2.2 GFLOP/s, 1% of the measured FMA peak, on mb32ic64ih56oc64oh56kh3ph1 (2-core Zen 3 VM, AVX2, 2026-11-30).
// Run: build/convlab run --model lab-cnn --kernel cpu.00_reference --batch 1,32
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/cpu/reference.hpp"

namespace convlab::cpu {

double reference_output(const ConvProblem& p, const float* input, std::span<const float> weight,
                        std::span<const float> bias, Activation activation, std::int64_t n, std::int64_t k,
                        std::int64_t y, std::int64_t x) {
  const std::int64_t cg = p.c_per_group(), g = k / p.k_per_group();
  const float* wk = weight.data() + k * cg * p.r * p.s;
  double acc = bias.empty() ? 0.0 : bias[k];
  for (std::int64_t c = 0; c < cg; ++c) {
    const float* in = input + (n * p.c + g * cg + c) * p.h * p.w;
    for (std::int64_t i = 0; i < p.r; ++i) {
      const std::int64_t iy = y * p.stride_h - p.pad_h + i * p.dilation_h;
      if (iy < 0 || iy >= p.h) continue;
      for (std::int64_t j = 0; j < p.s; ++j) {
        const std::int64_t ix = x * p.stride_w - p.pad_w + j * p.dilation_w;
        if (ix < 0 || ix >= p.w) continue;
        acc += static_cast<double>(in[iy * p.w + ix]) * wk[(c * p.r + i) * p.s + j];
      }
    }
  }
  return activate(activation, acc);
}

namespace {

class ReferenceConv final : public PlannedConv {
 public:
  ReferenceConv(const ConvProblem& p, const ConvWeights& w, Epilogue e)
      : p_(p), weight_(w.weight.begin(), w.weight.end()), bias_(w.bias.begin(), w.bias.end()), epilogue_(e) {}

  std::size_t weight_bytes() const override { return (weight_.size() + bias_.size()) * sizeof(float); }

  void run(const float* input, float* output, void*) const override {
    const std::int64_t oh = p_.out_h(), ow = p_.out_w();
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t n = 0; n < p_.n; ++n) {
      for (std::int64_t k = 0; k < p_.k; ++k) {
        float* out = output + (n * p_.k + k) * oh * ow;
        for (std::int64_t y = 0; y < oh; ++y)
          for (std::int64_t x = 0; x < ow; ++x)
            out[y * ow + x] = static_cast<float>(reference_output(p_, input, weight_, bias_, epilogue_.activation, n, k, y, x));
      }
    }
  }

 private:
  ConvProblem p_;
  std::vector<float> weight_, bias_;
  Epilogue epilogue_;
};

}  // namespace

std::string reference_unsupported(const ConvProblem&) { return {}; }

std::unique_ptr<PlannedConv> reference_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  check_weights(p, w);
  return std::make_unique<ReferenceConv>(p, w, e);
}

}  // namespace convlab::cpu
