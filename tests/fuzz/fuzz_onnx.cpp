// libFuzzer target: the ONNX importer (models/onnx_model.cpp) on arbitrary bytes. It may refuse them
// with InputError, never crash; what it accepts must be a network whose shapes chain (each layer
// reads an earlier one) and which its own builders would accept again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kernels/common/error.hpp"
#include "models/onnx_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const convlab::Network net = convlab::onnx_network(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    for (std::size_t i = 0; i < net.layers().size(); ++i)
      for (const int in : net.layers()[i].inputs)
        if (in != convlab::Network::kNetworkInput && (in < 0 || static_cast<std::size_t>(in) >= i)) std::abort();
    if (net.layers().empty() || net.output_item().item_elems() < 1) std::abort();
  } catch (const convlab::InputError&) {
  }
  return 0;
}
