// cpu.01_im2col_eigen: im2col + a library GEMM (Eigen 3.4).
//
// What changes against cpu.00_reference: each image (and group) is unrolled into a column matrix
// col[C/g*R*S x OH*OW] in the workspace, and the convolution becomes one GEMM
// out[K/g x OH*OW] = W * col done by Eigen; bias and activation follow in one pass (1x1 stride-1
// unpadded layers skip im2col: the input already is the column matrix).
// Why faster: the GEMM reuses each loaded value from registers and cache many times, in FP32
// with FMAs, where the reference reloads both operands for every multiply-add. The price is the
// im2col copy, R*S times the input. Threads: OpenMP over images when the batch shares out (one
// single-threaded GEMM each), else im2col split by rows and Eigen's own threaded GEMM.
// Bound: compute-bound in the GEMM once C/g*R*S and K/g are in the tens; memory-bound in im2col
// when C is small (lab-cnn's conv1) and on depthwise layers (use cpu.05).
// Measured: 46 GFLOP/s, 24% of the FMA peak, 0.33x oneDNN on mb32ic64ih56oc64oh56kh3ph1; 91 GFLOP/s (48%) on
//   the 1x1 mb32ic64ih28oc128oh28kh1 (2-core Zen 3 VM, AVX2, interleaved, 2026-11-30); AVX-512: 88-92
//   GFLOP/s, 0.65-0.69x oneDNN on the first (Ice Lake VM, 2026-11-29, bench/RESULTS.md).
// More (threading, Eigen's buffers, determinism): docs/kernel-notes.md#cpu01_im2col_eigen
// Run: build/convlab conv --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cpu.01_im2col_eigen,onednn.conv --interleave
#include <algorithm>
#include <cstdint>
#include <vector>

#include <Eigen/Core>
#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab::cpu {

namespace {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class Im2colEigenConv final : public PlannedConv {
 public:
  Im2colEigenConv(const ConvProblem& p, const ConvWeights& w, Epilogue e)
      : p_(p), weight_(w.weight.begin(), w.weight.end()), bias_(w.bias.begin(), w.bias.end()), epilogue_(e),
        slices_(std::max<std::int64_t>(1, std::min<std::int64_t>(p.n, omp_get_max_threads()))) {}

  std::size_t weight_bytes() const override { return (weight_.size() + bias_.size()) * sizeof(float); }

  // One column matrix per thread that may run an image at once (the thread count seen at plan).
  std::size_t workspace_bytes() const override {
    return input_is_col() ? 0 : static_cast<std::size_t>(slices_ * col_rows() * pixels()) * sizeof(float);
  }

  void run(const float* input, float* output, void* workspace) const override {
    float* cols = static_cast<float*>(workspace);
    const auto threads = static_cast<std::int64_t>(omp_get_max_threads());
    if (p_.n >= threads && slices_ > 1) {
      // Inside this region Eigen sees omp_get_num_threads() > 1 and runs single-threaded.
#pragma omp parallel for num_threads(static_cast<int>(std::min(threads, slices_))) schedule(static)
      for (std::int64_t n = 0; n < p_.n; ++n)
        image(input, output, n, cols + omp_get_thread_num() * col_rows() * pixels(), false);
    } else {
      for (std::int64_t n = 0; n < p_.n; ++n) image(input, output, n, cols, true);
    }
  }

 private:
  std::int64_t col_rows() const { return p_.c_per_group() * p_.r * p_.s; }
  std::int64_t pixels() const { return p_.out_h() * p_.out_w(); }
  bool input_is_col() const {
    return p_.r == 1 && p_.s == 1 && p_.stride_h == 1 && p_.stride_w == 1 && !p_.has_padding();
  }

  void image(const float* input, float* output, std::int64_t n, float* cols, bool parallel_inside) const {
    const std::int64_t cg = p_.c_per_group(), kg = p_.k_per_group();
    for (std::int64_t g = 0; g < p_.groups; ++g) {
      const float* in = input + (n * p_.c + g * cg) * p_.h * p_.w;
      const float* col = in;
      if (!input_is_col()) {
        im2col(in, cols, parallel_inside);
        col = cols;
      }
      float* out = output + (n * p_.k + g * kg) * pixels();
      Eigen::Map<const RowMajorMatrix> w(weight_.data() + g * kg * col_rows(), kg, col_rows());
      Eigen::Map<const RowMajorMatrix> c(col, col_rows(), pixels());
      Eigen::Map<RowMajorMatrix> o(out, kg, pixels());
      o.noalias() = w * c;
      epilogue(out, g * kg, kg);
    }
  }

  // col row (c, i, j), column (y, x) = input pixel (c, y*sh - ph + i*dh, x*sw - pw + j*dw), 0 outside.
  void im2col(const float* in, float* cols, bool parallel) const {
    const ConvProblem& p = p_;
    const std::int64_t oh = p.out_h(), ow = p.out_w();
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t row = 0; row < col_rows(); ++row) {
      const std::int64_t c = row / (p.r * p.s), i = row / p.s % p.r, j = row % p.s;
      const float* plane = in + c * p.h * p.w;
      float* dst = cols + row * oh * ow;
      for (std::int64_t y = 0; y < oh; ++y) {
        const std::int64_t iy = y * p.stride_h - p.pad_h + i * p.dilation_h;
        for (std::int64_t x = 0; x < ow; ++x) {
          const std::int64_t ix = x * p.stride_w - p.pad_w + j * p.dilation_w;
          dst[y * ow + x] = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w ? plane[iy * p.w + ix] : 0.0f;
        }
      }
    }
  }

  void epilogue(float* out, std::int64_t k0, std::int64_t rows) const {
    const std::int64_t hw = pixels();
    for (std::int64_t k = 0; k < rows; ++k) {
      const float b = bias_.empty() ? 0.0f : bias_[static_cast<std::size_t>(k0 + k)];
      float* row = out + k * hw;
      for (std::int64_t x = 0; x < hw; ++x) row[x] = activate(epilogue_.activation, row[x] + b);
    }
  }

  ConvProblem p_;
  std::vector<float> weight_, bias_;  // weight: K x C/g*R*S row-major, as PyTorch stores it
  Epilogue epilogue_;
  std::int64_t slices_;  // column matrices in the workspace
};

}  // namespace

std::string im2col_eigen_unsupported(const ConvProblem&) { return {}; }

std::unique_ptr<PlannedConv> im2col_eigen_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  check_weights(p, w);
  return std::make_unique<Im2colEigenConv>(p, w, e);
}

}  // namespace convlab::cpu
