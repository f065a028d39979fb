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

GpuInt8Conv::GpuInt8Conv(GpuRuntime& rt, std::string_view kernel_id, const ConvProblem& p, const Int8ConvWeights& weights,
                         Epilogue epilogue)
    : rt_(&rt), kernel_(&rt.int8_conv_kernel(kernel_id)), shape_(to_shape(p)), in_zero_point_(weights.input.zero_point) {
  if (std::string why = unsupported(*kernel_, p); !why.empty())
    throw InputError(fmt::format("{} does not support {}: {}", kernel_id, to_string(p), why));
  check_int8_weights(p, weights);
  const Requantization r = make_requantization(weights, p.k, epilogue.activation);
  out_zero_point_ = r.zero_point, lo_ = r.lo, hi_ = r.hi;
  const std::int64_t taps = p.c_per_group() * p.r * p.s;
  std::vector<std::int32_t> compensation(static_cast<std::size_t>(p.k));
  for (std::int64_t k = 0; k < p.k; ++k) {
    std::int32_t sum = 0;
    for (std::int64_t t = 0; t < taps; ++t) sum += weights.weight[static_cast<std::size_t>(k * taps + t)];
    compensation[static_cast<std::size_t>(k)] = (128 - in_zero_point_) * sum;
  }
  const std::vector<signed char> prepared = kernel_->weights(p, weights.weight);
  weight_ = DeviceBuffer::of_bytes(rt, prepared.size());
  rt.upload_bytes(weight_.data(), prepared.data(), prepared.size());
  compensation_ = DeviceBuffer(rt, compensation.size());
  rt.upload_bytes(compensation_.data(), compensation.data(), compensation.size() * sizeof(std::int32_t));
  multiplier_ = DeviceBuffer(rt, r.multiplier.size());
  rt.upload(multiplier_.data(), r.multiplier.data(), r.multiplier.size());
  offset_ = DeviceBuffer(rt, r.offset.size());
  rt.upload(offset_.data(), r.offset.data(), r.offset.size());
  rt.synchronize();
}

void GpuInt8Conv::run(const std::uint8_t* in, std::uint8_t* out) const {
  rt_->conv_int8(*kernel_, Int8ConvArgs{.p = shape_, .in = in, .weight = reinterpret_cast<const signed char*>(weight_.data()),
                                        .compensation = reinterpret_cast<const int*>(compensation_.data()),
                                        .multiplier = multiplier_.data(), .offset = offset_.data(), .out = out,
                                        .in_zero_point = in_zero_point_, .out_zero_point = out_zero_point_, .lo = lo_,
                                        .hi = hi_});
}

}  // namespace convlab::gpu
