// BatchNorm folding. In eval mode a BatchNorm2d after a convolution is an affine map per output
// channel, so it can be folded into the convolution's weights and bias once, at build time:
//   s = gamma / sqrt(running_var + eps),  W' = W * s,  b' = (b - running_mean) * s + beta.
// The kernels then never see BatchNorm, and every kernel is validated on the folded network.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/network.hpp"

namespace convlab {

inline constexpr double kBatchNormEps = 1e-5;  // PyTorch's BatchNorm2d default

struct BatchNormParams {
  std::vector<float> weight, bias, running_mean, running_var;  // gamma, beta, mean, var: one per channel
  double eps = kBatchNormEps;
};

// Fetches <prefix>.weight, .bias, .running_mean and .running_var (num_batches_tracked is unused).
BatchNormParams load_batchnorm(const WeightSource& weights, const std::string& prefix, std::int64_t channels);

// Folds `bn` into a conv's OIHW weight and its bias (an empty bias counts as zeros and is sized
// to the channel count). Computed in double, rounded once. Throws InputError on a size mismatch
// or a negative variance.
void fold_batchnorm(const BatchNormParams& bn, std::vector<float>& weight, std::vector<float>& bias);

}  // namespace convlab
