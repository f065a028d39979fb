// GCC 12 warns (-Wmaybe-uninitialized) inside the AVX-512 intrinsics Eigen's GEMM inlines, about
// their deliberately undefined operand: a false positive in headers this project does not own.
// The warning is located in the intrinsics header, so it must be silenced before anything
// includes it.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/cpu/winograd.hpp"

#define EIGEN_DONT_PARALLELIZE  // one GEMM per thread: the parallelism is over chunks of tiles
#include <Eigen/Core>

namespace convlab::cpu::winograd {

std::string unsupported(const ConvProblem& p) {
  if (p.r != 3 || p.s != 3) return fmt::format("kernel {}x{}: Winograd F(m, 3x3) needs 3x3", p.r, p.s);
  if (p.stride_h != 1 || p.stride_w != 1)
    return fmt::format("stride {}x{}: Winograd needs stride 1", p.stride_h, p.stride_w);
  if (p.dilation_h != 0 || p.dilation_w != 0)
    return fmt::format("dilation {}x{}: Winograd needs a dense kernel (dilation 0)", p.dilation_h, p.dilation_w);
  if (p.groups != 1) return fmt::format("groups = {}: this Winograd kernel needs groups = 1", p.groups);
  return {};
}

void gemm(const float* lhs, const float* rhs, float* out, std::int64_t rows, std::int64_t inner, std::int64_t cols) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<RowMajor>(out, rows, cols).noalias() =
      Eigen::Map<const RowMajor>(lhs, rows, inner) * Eigen::Map<const RowMajor>(rhs, inner, cols);
}

}  // namespace convlab::cpu::winograd
