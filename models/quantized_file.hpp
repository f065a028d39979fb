// The int8 interchange file: a safetensors file holding what a quantised PyTorch model of the same
// architecture holds, so that either side can run the other's quantisation. For every conv or
// linear layer L (PyTorch module names, BatchNorm folded in): `L.weight` I8 [K, C/groups, R, S]
// or [K, C], `L.weight_scale` F32 [K], `L.bias` F32 [K], `L.scale` F32 and `L.zero_point` I64 or
// I32 (shape [] or [1]: the layer's output quantisation, after its fused ReLU or ReLU6); the input
// stub's `quant.scale` and `quant.zero_point`; for every residual add, `<block>.add_relu.scale`
// and `.zero_point` (`<block>.add` without ReLU), as torchvision's quantizable ResNet names its
// FloatFunctional. An optional `L.weight_zero_point` must be all zero (symmetric weights). A
// missing or extra name, a wrong dtype or shape, a non-positive scale or a zero point outside
// [0, 255] is refused by name.
#pragma once

#include <string>

#include "models/quantized_network.hpp"
#include "models/safetensors.hpp"

namespace convlab {

TensorFile quantized_tensors(const QuantizedNetwork& q);
// Throws InputError naming the tensor (and the file, `label`) for anything that does not fit `net`.
QuantizedNetwork load_quantized(const Network& net, const TensorFile& file, const std::string& label);

}  // namespace convlab
