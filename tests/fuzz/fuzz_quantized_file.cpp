// libFuzzer target: the int8 interchange file's loader (models/quantized_file.cpp) on arbitrary
// bytes, against every reference network. It may refuse them with InputError, never crash; what it
// accepts must write back (quantized_tensors) to a file that loads to the same model.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/quantized_file.hpp"

namespace {

const std::vector<convlab::Network>& networks() {
  static const std::vector<convlab::Network> nets = [] {
    std::vector<convlab::Network> v;
    for (const convlab::ModelInfo& m : convlab::all_models())
      if (!m.imagenet_size) v.push_back(m.build(convlab::seeded_weights(1)));
    return v;
  }();
  return nets;
}

bool same(const convlab::QuantizedNetwork& a, const convlab::QuantizedNetwork& b) {
  if (a.input().scale != b.input().scale || a.input().zero_point != b.input().zero_point) return false;
  for (int i = 0; i < static_cast<int>(a.network().layers().size()); ++i) {
    if (a.activation(i).scale != b.activation(i).scale || a.activation(i).zero_point != b.activation(i).zero_point) return false;
    if (!convlab::has_int8_weights(a.network().layers()[static_cast<std::size_t>(i)])) continue;
    const convlab::QuantizedWeights &x = a.weights(i), &y = b.weights(i);
    if (x.weight != y.weight || x.weight_scale != y.weight_scale) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  convlab::TensorFile file;
  try {
    file = convlab::parse_safetensors(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const convlab::InputError&) {
    return 0;
  }
  for (const convlab::Network& net : networks()) {
    try {
      const convlab::QuantizedNetwork q = convlab::load_quantized(net, file, "fuzz");
      const convlab::QuantizedNetwork back = convlab::load_quantized(net, convlab::quantized_tensors(q), "round trip");
      if (!same(q, back)) std::abort();
    } catch (const convlab::InputError&) {
    }
  }
  return 0;
}
