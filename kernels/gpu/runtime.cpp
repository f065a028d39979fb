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
