// The other operators a small CNN needs. Plain, clear loops in NCHW: they are not the subject of
// the lab (convolutions are), but they run inside every timed forward, so they are parallel
// where that is free and they never allocate.
#pragma once

#include <cstdint>

#include "kernels/common/quantize.hpp"
#include "kernels/common/tensor.hpp"

namespace convlab::ops {

struct Pool2d {
  std::int64_t kernel = 2;
  std::int64_t stride = 2;
  std::int64_t pad = 0;
};
// PyTorch's floor mode: out = (in + 2 pad - kernel) / stride + 1. Throws InputError when empty.
Shape pool_output_shape(const Shape& in, const Pool2d& pool);

void relu(float* x, std::int64_t count);  // in place
// Padding never wins a max (it counts as -infinity).
void max_pool2d(const float* in, const Shape& in_shape, float* out, const Pool2d& pool);
// Padding counts as zeros in the divisor (PyTorch's count_include_pad=True default).
void avg_pool2d(const float* in, const Shape& in_shape, float* out, const Pool2d& pool);
// N x C x H x W -> N x C
void global_avg_pool(const float* in, const Shape& in_shape, float* out);
// y = x W^T + b, with W as PyTorch stores it (out_features x in_features). bias may be null.
void linear(const float* in, std::int64_t batch, std::int64_t in_features, const float* weight,
            const float* bias, std::int64_t out_features, float* out, bool relu = false);
// Row-wise softmax over `classes`, max-subtracted for stability.
void softmax(const float* in, std::int64_t batch, std::int64_t classes, float* out);
// out = a + b (optionally then ReLU): the residual connection.
void add(const float* a, const float* b, float* out, std::int64_t count, bool relu = false);

// Quantised (quint8) twins, for int8 networks (models/quantized_network.hpp). The pools keep
// their input's quantisation; add requantises both inputs to its own (then ReLU clamps at the
// real 0); quantize and dequantize are PyTorch's QuantStub and DeQuantStub.
void max_pool2d_u8(const std::uint8_t* in, const Shape& in_shape, std::uint8_t* out, const Pool2d& pool);
void avg_pool2d_u8(const std::uint8_t* in, const Shape& in_shape, std::uint8_t* out, const Pool2d& pool, std::int32_t zero_point);
void global_avg_pool_u8(const std::uint8_t* in, const Shape& in_shape, std::uint8_t* out);
void add_u8(const std::uint8_t* a, QuantParams qa, const std::uint8_t* b, QuantParams qb, std::uint8_t* out,
         QuantParams qout, std::int64_t count, bool relu = false);
void quantize(const float* in, std::uint8_t* out, std::int64_t count, QuantParams q);
void dequantize(const std::uint8_t* in, float* out, std::int64_t count, QuantParams q);

}  // namespace convlab::ops
