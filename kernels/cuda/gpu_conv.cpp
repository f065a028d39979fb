#include "kernels/cuda/gpu_conv.hpp"

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab::cuda {

GpuConv::GpuConv(GpuRuntime& rt, std::string_view kernel_id, const ConvProblem& p, const ConvWeights& weights,
                 Epilogue epilogue, FusedPool pool)
    : rt_(&rt), variant_(rt.conv_variant(kernel_id, p)), shape_(to_shape(p)), activation_(to_act(epilogue.activation)),
      pool_(pool) {
  if (std::string why = rt.conv_unsupported(variant_, p); !why.empty())
    throw InputError(fmt::format("{} does not support {}: {}", kernel_id, to_string(p), why));
  if (pool.kind != kPoolNone && !rt.conv_fuses_pool(variant_))
    throw InputError(fmt::format("{} ({}) cannot fuse a pooling layer", kernel_id, rt.conv_name(variant_)));
  check_weights(p, weights);
  const std::vector<float> prepared = rt.conv_weights(variant_, p, weights.weight);
  weight_ = DeviceBuffer(rt, prepared.size());
  rt.upload(weight_.data(), prepared.data(), prepared.size());
  if (!weights.bias.empty()) {
    bias_ = DeviceBuffer(rt, weights.bias.size());
    rt.upload(bias_.data(), weights.bias.data(), weights.bias.size());
  }
  workspace_ = DeviceBuffer(rt, rt.conv_workspace_floats(variant_, shape_));
  rt.synchronize();  // `prepared` goes out of scope: the copies must be done
}

void GpuConv::run(const float* in, float* out, const float* residual) const {
  rt_->conv(variant_, ConvArgs{.p = shape_, .in = in, .weight = weight_.data(), .bias = bias_.data(),
                               .residual = residual, .out = out, .activation = activation_, .pool = pool_},
              workspace_.data());
}

}  // namespace convlab::cuda
