#include "kernels/gpu/runtime.hpp"

#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab::gpu {

const Int8ConvKernel& GpuRuntime::int8_conv_kernel(std::string_view kernel_id) const {
  throw InputError(fmt::format("'{}': the {} backend has no int8 kernels", kernel_id, name()));
}

void GpuRuntime::conv_int8(const Int8ConvKernel& kernel, const Int8ConvArgs&) {
  throw InputError(fmt::format("'{}': the {} backend has no int8 kernels", kernel.id, name()));
}

void GpuRuntime::quantize(const float*, unsigned char*, long long, float, int) {
  throw InputError(fmt::format("quantize: the {} backend has no int8 ops", name()));
}
void GpuRuntime::dequantize(const unsigned char*, float*, long long, float, int) {
  throw InputError(fmt::format("dequantize: the {} backend has no int8 ops", name()));
}
void GpuRuntime::pool_u8(const PoolArgsU8&, bool) {
  throw InputError(fmt::format("int8 pooling: the {} backend has no int8 ops", name()));
}
void GpuRuntime::global_avg_pool_u8(const unsigned char*, int, int, unsigned char*) {
  throw InputError(fmt::format("int8 global average pooling: the {} backend has no int8 ops", name()));
}
void GpuRuntime::add_u8(const AddArgsU8&) {
  throw InputError(fmt::format("int8 add: the {} backend has no int8 ops", name()));
}

void GpuRuntime::upload_bytes(void* device, const void* host, std::size_t bytes) {
  std::vector<float> padded((bytes + 3) / 4, 0.0f);
  std::memcpy(padded.data(), host, bytes);
  upload(static_cast<float*>(device), padded.data(), padded.size());
  synchronize();  // `padded` goes out of scope
}

void GpuRuntime::download_bytes(void* host, const void* device, std::size_t bytes) {
  std::vector<float> padded((bytes + 3) / 4);
  download(padded.data(), static_cast<const float*>(device), padded.size());
  synchronize();
  std::memcpy(host, padded.data(), bytes);
}

}  // namespace convlab::gpu
