// Helpers shared by the convolution tests: deterministic data and the accuracy bound.
#pragma once

#include <cmath>
#include <vector>

#include "kernels/common/kernel.hpp"
#include "models/network.hpp"

namespace convlab::test {

inline std::vector<float> random_values(std::int64_t count, std::uint64_t stream) {
  std::vector<float> v(static_cast<std::size_t>(count));
  fill_uniform(v, 1234, stream);
  return v;
}

inline std::vector<float> run_kernel(const KernelInfo& kernel, const ConvProblem& p, const std::vector<float>& input,
                                     const std::vector<float>& weight, const std::vector<float>& bias,
                                     Activation activation) {
  auto planned = kernel.plan(p, ConvWeights{weight, bias}, Epilogue{.activation = activation});
  std::vector<float> out(static_cast<std::size_t>(p.output_elems()));
  std::vector<unsigned char> workspace(planned->workspace_bytes() + 64);
  planned->run(input.data(), out.data(), workspace.data());
  return out;
}

inline std::vector<float> absolute(std::vector<float> v) {
  for (float& x : v) x = std::fabs(x);
  return v;
}

}  // namespace convlab::test
