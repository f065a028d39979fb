// libFuzzer target: models/safetensors.cpp's parser on arbitrary bytes. It may reject the bytes
// with InputError, never crash; what it accepts must survive a write and a read back unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/common/error.hpp"
#include "models/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  convlab::TensorFile file;
  try {
    file = convlab::parse_safetensors(bytes, "fuzz");
  } catch (const convlab::InputError&) {
    return 0;
  }
  // Round trip the float tensors, the only ones the writer writes (as F32).
  convlab::TensorFile floats;
  for (const auto& [name, t] : file.tensors)
    if (t.is_float()) floats.tensors[name] = {.dtype = "F32", .shape = t.shape, .values = t.values};
  const convlab::TensorFile back = convlab::parse_safetensors(convlab::serialize_safetensors(floats), "round trip");
  if (back.tensors.size() != floats.tensors.size()) std::abort();
  for (const auto& [name, t] : floats.tensors)
    if (back.tensors.at(name).shape != t.shape || back.tensors.at(name).values.size() != t.values.size()) std::abort();
  return 0;
}
