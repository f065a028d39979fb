#include "models/batchnorm.hpp"

#include <cmath>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

BatchNormParams load_batchnorm(const WeightSource& weights, const std::string& prefix, std::int64_t channels) {
  const std::vector<std::int64_t> shape{channels};
  return BatchNormParams{.weight = weights(prefix + ".weight", shape, channels),
                         .bias = weights(prefix + ".bias", shape, channels),
                         .running_mean = weights(prefix + ".running_mean", shape, channels),
                         .running_var = weights(prefix + ".running_var", shape, channels)};
}

void fold_batchnorm(const BatchNormParams& bn, std::vector<float>& weight, std::vector<float>& bias) {
  const std::size_t channels = bn.weight.size();
  if (bn.bias.size() != channels || bn.running_mean.size() != channels || bn.running_var.size() != channels)
    throw InputError(fmt::format("batchnorm: parameter sizes differ ({}, {}, {}, {})", channels, bn.bias.size(),
                                 bn.running_mean.size(), bn.running_var.size()));
  if (channels == 0 || weight.size() % channels != 0)
    throw InputError(fmt::format("batchnorm: {} weights do not split into {} channels", weight.size(), channels));
  if (bias.empty()) bias.assign(channels, 0.0f);
  if (bias.size() != channels)
    throw InputError(fmt::format("batchnorm: {} biases for {} channels", bias.size(), channels));
  const std::size_t per_channel = weight.size() / channels;
  for (std::size_t k = 0; k < channels; ++k) {
    const double var = bn.running_var[k];
    if (!(var >= 0.0))
      throw InputError(fmt::format("batchnorm: running_var[{}] = {} is not a variance", k, bn.running_var[k]));
    const double scale = bn.weight[k] / std::sqrt(var + bn.eps);
    for (std::size_t i = k * per_channel; i < (k + 1) * per_channel; ++i)
      weight[i] = static_cast<float>(weight[i] * scale);
    bias[k] = static_cast<float>((static_cast<double>(bias[k]) - bn.running_mean[k]) * scale + bn.bias[k]);
  }
}

}  // namespace convlab
