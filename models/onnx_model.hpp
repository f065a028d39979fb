// A network from an ONNX file (`--model path/to/model.onnx`): the graph checked and translated into
// convlab's layers, weights from its initializers. Parsed with the ONNX protobuf schema from
// Debian's libonnx-dev; without it the build says so when asked for a .onnx model.
//
// Supported, opsets 11 to 17: Conv (groups, depthwise, dilations, strides, explicit pads or
// auto_pad, when the padding is the same on both sides of each axis), BatchNormalization after a
// Conv (folded into it, as for the built-in networks), Relu and Clip(0, 6) after a Conv, Gemm or
// Add (fused into it), MaxPool and AveragePool (square, floor mode; an average counts padding),
// GlobalAveragePool, Add of two layers (a residual), Flatten and Reshape to 2-D, Gemm (transB
// either way), MatMul followed by Add of a bias, Identity and Dropout (inference: identity), Pad
// of nothing (PyTorch puts one before an AveragePool). The
// graph's single input is N x C x H x W float with C, H and W fixed (N is the batch, free: runs
// take theirs from --batch); its first output is the network's output. Further outputs name
// intermediate values for `validate` (tools/export_torch.py --onnx adds one per layer).
//
// A layer is named after the value it produces: the graph output's name when one aliases it, else
// the last fused node's output (what --per-layer and --explain show; `validate` compares the
// expect file's tensor of that name).
#pragma once

#include <string>
#include <string_view>

#include "models/network.hpp"

namespace convlab {

// True when `model` names an ONNX file (it ends in .onnx) rather than a built-in network.
bool is_onnx_model(std::string_view model);

// The network of an ONNX model's bytes; `label` (the file) prefixes every error. Throws InputError
// naming the node, its op type and what is supported for anything else, and for a malformed or
// truncated file, external data, a missing initializer or a shape that does not fit.
Network onnx_network(const std::string& bytes, const std::string& label);
// The file read, then onnx_network.
Network load_onnx(const std::string& path);

}  // namespace convlab
