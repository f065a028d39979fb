#include "kernels/gpu/gpu_conv.hpp"

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab::gpu {

GpuConv::GpuConv(GpuRuntime& rt, std::string_view kernel_id, const ConvProblem& p, const ConvWeights& weights,
                 Epilogue epilogue, FusedPool pool)
    : rt_(&rt), kernel_(&rt.conv_kernel(kernel_id, p)), shape_(to_shape(p)), activation_(to_act(epilogue.activation)),
      pool_(pool) {
  if (std::string why = unsupported(*kernel_, p); !why.empty())
    throw InputError(fmt::format("{} does not support {}: {}", kernel_id, to_string(p), why));
  if (pool.kind != kPoolNone && !kernel_->fuses_pool)
    throw InputError(fmt::format("{} ({}) cannot fuse a pooling layer", kernel_id, kernel_->id));
  check_weights(p, weights);
  const std::vector<float> prepared = kernel_->weights(p, weights.weight);
  weight_ = DeviceBuffer(rt, prepared.size());
  rt.upload(weight_.data(), prepared.data(), prepared.size());
  if (!weights.bias.empty()) {
    bias_ = DeviceBuffer(rt, weights.bias.size());
    rt.upload(bias_.data(), weights.bias.data(), weights.bias.size());
  }
  workspace_ = DeviceBuffer(rt, kernel_->workspace_floats(shape_));
  rt.synchronize();  // `prepared` goes out of scope: the copies must be done
}

void GpuConv::run(const float* in, float* out, const float* residual) const {
  rt_->conv(*kernel_, ConvArgs{.p = shape_, .in = in, .weight = weight_.data(), .bias = bias_.data(),
                               .residual = residual, .out = out, .activation = activation_, .pool = pool_},
              workspace_.data());
}

}  // namespace convlab::gpu
