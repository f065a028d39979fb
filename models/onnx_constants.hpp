// Constant folding for the ONNX importer (models/onnx_model.cpp): the few ops PyTorch's exporter
// uses to compute a value that is in fact fixed, chiefly F.pad's pads (ConstantOfShape, Concat,
// Reshape, Slice, Transpose, Cast), evaluated at import so that the Pad they feed sees constants.
// Built only with the ONNX schema (CONVLAB_WITH_ONNX).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <onnx/onnx_pb.h>

namespace convlab::onnx_import {

struct Constant {  // an initializer, a Constant node's value, or a folded one
  std::vector<std::int64_t> shape;
  std::vector<double> values;  // row-major; int64 values up to 2^53 are exact
};

// Folded constants stay small: a shape computation, never a tensor of weights.
inline constexpr std::int64_t kMaxFoldedElems = std::int64_t{1} << 20;

// True for the ops fold() evaluates.
bool foldable(const onnx::NodeProto& n);

// Node n's output, given its inputs (null where an optional input is absent). Throws InputError
// with the reason (no node name: the caller adds it) when the inputs do not fit the op.
Constant fold(const onnx::NodeProto& n, const std::vector<const Constant*>& inputs);

}  // namespace convlab::onnx_import
