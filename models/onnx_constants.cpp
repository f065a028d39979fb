#include "models/onnx_constants.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab::onnx_import {

namespace {

std::int64_t elems(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0 || d > kMaxFoldedElems) throw InputError(fmt::format("a dimension of {} is out of range", d));
    n *= d;
    if (n > kMaxFoldedElems) throw InputError(fmt::format("would make over {} values", kMaxFoldedElems));
  }
  return n;
}

// A value as an index: integral, clamped to +-2^62 (ONNX writes "to the end" as INT64_MAX).
std::int64_t index_value(double v) {
  if (!std::isfinite(v) || v != std::floor(v)) throw InputError(fmt::format("holds {} where an integer belongs", v));
  return static_cast<std::int64_t>(std::clamp(v, -0x1p62, 0x1p62));
}

std::vector<std::int64_t> indices(const Constant& c) {
  std::vector<std::int64_t> v;
  for (const double x : c.values) v.push_back(index_value(x));
  return v;
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const Constant& input(const std::vector<const Constant*>& inputs, std::size_t i, const char* role) {
  if (i >= inputs.size() || inputs[i] == nullptr) throw InputError(fmt::format("has no {}", role));
  return *inputs[i];
}

// An axis in [-rank, rank) as [0, rank).
std::int64_t axis_in(std::int64_t axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank) throw InputError(fmt::format("axis {} is outside a rank-{} tensor", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

// Row-major strides of a shape.
std::vector<std::int64_t> strides_of(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Constant constant_of_shape(const onnx::NodeProto& n, const Constant& shape) {
  Constant c{.shape = indices(shape)};
  double value = 0;
  if (const onnx::AttributeProto* a = attribute(n, "value"); a != nullptr && a->has_t()) {
    const onnx::TensorProto& t = a->t();
    if (t.int64_data_size() == 1) value = static_cast<double>(t.int64_data(0));
    else if (t.float_data_size() == 1) value = t.float_data(0);
    else if (t.int32_data_size() == 1) value = t.int32_data(0);
    else if (t.data_type() == onnx::TensorProto_DataType_INT64 && t.raw_data().size() == 8) {
      std::int64_t v;
      std::copy_n(t.raw_data().data(), 8, reinterpret_cast<char*>(&v));
      value = static_cast<double>(v);
    } else if (t.data_type() == onnx::TensorProto_DataType_FLOAT && t.raw_data().size() == 4) {
      float v;
      std::copy_n(t.raw_data().data(), 4, reinterpret_cast<char*>(&v));
      value = v;
    } else {
      throw InputError("its value is not one int64, int32 or float");
    }
  }
  c.values.assign(static_cast<std::size_t>(elems(c.shape)), value);
  return c;
}

Constant concat(const onnx::NodeProto& n, const std::vector<const Constant*>& inputs) {
  if (const onnx::AttributeProto* a = attribute(n, "axis"); a != nullptr) axis_in(a->i(), 1);  // 1-D: 0 or -1
  Constant c{.shape = {0}};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Constant& x = input(inputs, i, "input");
    if (x.shape.size() != 1) throw InputError("concatenates constants of other than one dimension");
    c.values.insert(c.values.end(), x.values.begin(), x.values.end());
  }
  c.shape[0] = static_cast<std::int64_t>(c.values.size());
  elems(c.shape);
  return c;
}

Constant reshape(const Constant& data, const Constant& shape_input) {
  std::vector<std::int64_t> shape = indices(shape_input);
  std::int64_t known = 1, infer = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {
      if (i >= data.shape.size()) throw InputError("copies a dimension the input does not have");
      shape[i] = data.shape[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) throw InputError("has two -1 dimensions");
      infer = static_cast<std::int64_t>(i);
    } else if (shape[i] < 0) {
      throw InputError(fmt::format("has a dimension of {}", shape[i]));
    } else {
      // Checked before the product: a dimension may be as large as 2^62.
      if (shape[i] > kMaxFoldedElems) throw InputError(fmt::format("has a dimension of {}", shape[i]));
      known *= std::max<std::int64_t>(shape[i], 1);
      if (known > kMaxFoldedElems) throw InputError("its shape is out of range");
    }
  }
  const auto count = static_cast<std::int64_t>(data.values.size());
  if (infer >= 0) shape[static_cast<std::size_t>(infer)] = known > 0 && count % known == 0 ? count / known : -1;
  if (infer >= 0 && shape[static_cast<std::size_t>(infer)] < 0) throw InputError("cannot infer its -1 dimension");
  if (elems(shape) != count) throw InputError(fmt::format("reshapes {} values to a shape of {}", count, elems(shape)));
  return {.shape = shape, .values = data.values};
}

Constant slice(const std::vector<const Constant*>& inputs) {
  const Constant& data = input(inputs, 0, "data");
  const std::vector<std::int64_t> starts = indices(input(inputs, 1, "starts")), ends = indices(input(inputs, 2, "ends"));
  const auto rank = static_cast<std::int64_t>(data.shape.size());
  std::vector<std::int64_t> axes(starts.size()), steps(starts.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (inputs.size() > 3 && inputs[3] != nullptr) axes = indices(*inputs[3]);
  if (inputs.size() > 4 && inputs[4] != nullptr) steps = indices(*inputs[4]);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw InputError("its starts, ends, axes and steps differ in length");
  // Per axis: first index, step and count (ONNX's clamping rules).
  std::vector<std::int64_t> first(data.shape.size(), 0), step(data.shape.size(), 1), count = data.shape;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::int64_t a = axis_in(axes[i], rank), dim = data.shape[static_cast<std::size_t>(a)];
    const std::int64_t s = steps[i];
    if (s == 0) throw InputError("has a step of 0");
    std::int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
    std::int64_t n = 0;
    if (dim > 0 && s > 0) {
      b = std::clamp<std::int64_t>(b, 0, dim), e = std::clamp<std::int64_t>(e, 0, dim);
      n = e > b ? (e - b + s - 1) / s : 0;
    } else if (dim > 0) {  // backwards: from b down to e, exclusive
      b = std::clamp<std::int64_t>(b, 0, dim - 1), e = std::clamp<std::int64_t>(e, -1, dim - 1);
      n = b > e ? (b - e - s - 1) / -s : 0;
    }
    first[static_cast<std::size_t>(a)] = b, step[static_cast<std::size_t>(a)] = s, count[static_cast<std::size_t>(a)] = n;
  }
  Constant c{.shape = count};
  const std::int64_t total = elems(count);
  const std::vector<std::int64_t> from = strides_of(data.shape), to = strides_of(count);
  for (std::int64_t o = 0; o < total; ++o) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < count.size(); ++d) at += (first[d] + (o / to[d] % count[d]) * step[d]) * from[d];
    c.values.push_back(data.values[static_cast<std::size_t>(at)]);
  }
  return c;
}

Constant transpose(const onnx::NodeProto& n, const Constant& data) {
  const auto rank = static_cast<std::int64_t>(data.shape.size());
  std::vector<std::int64_t> perm(data.shape.size());
  std::iota(perm.rbegin(), perm.rend(), 0);  // default: reversed
  if (const onnx::AttributeProto* a = attribute(n, "perm"); a != nullptr) perm.assign(a->ints().begin(), a->ints().end());
  std::vector<std::int64_t> sorted = perm, axes(perm.size());
  std::ranges::sort(sorted);
  std::iota(axes.begin(), axes.end(), 0);
  if (static_cast<std::int64_t>(perm.size()) != rank || sorted != axes)
    throw InputError("its perm is not a permutation of the input's axes");
  Constant c;
  for (const std::int64_t p : perm) c.shape.push_back(data.shape[static_cast<std::size_t>(p)]);
  const std::vector<std::int64_t> from = strides_of(data.shape), to = strides_of(c.shape);
  const std::int64_t total = elems(c.shape);
  for (std::int64_t o = 0; o < total; ++o) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < perm.size(); ++d) at += (o / to[d] % c.shape[d]) * from[static_cast<std::size_t>(perm[d])];
    c.values.push_back(data.values[static_cast<std::size_t>(at)]);
  }
  return c;
}

Constant cast(const onnx::NodeProto& n, Constant data) {
  const onnx::AttributeProto* to = attribute(n, "to");
  if (to == nullptr) throw InputError("has no 'to' type");
  switch (to->i()) {
    case onnx::TensorProto_DataType_FLOAT:
    case onnx::TensorProto_DataType_DOUBLE:
    case onnx::TensorProto_DataType_FLOAT16: break;
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_INT32:
      for (double& v : data.values) v = std::trunc(v);
      break;
    default: throw InputError(fmt::format("casts to type {}, not a float or int32/int64", to->i()));
  }
  return data;
}

}  // namespace

bool foldable(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  return op == "ConstantOfShape" || op == "Concat" || op == "Reshape" || op == "Slice" || op == "Transpose" || op == "Cast";
}

Constant fold(const onnx::NodeProto& n, const std::vector<const Constant*>& inputs) {
  const std::string& op = n.op_type();
  for (const Constant* c : inputs)
    if (c != nullptr && static_cast<std::int64_t>(c->values.size()) > kMaxFoldedElems)
      throw InputError(fmt::format("reads a constant of over {} values (convlab folds shape computations only)", kMaxFoldedElems));
  if (op == "ConstantOfShape") return constant_of_shape(n, input(inputs, 0, "shape"));
  if (op == "Concat") return concat(n, inputs);
  if (op == "Reshape") return reshape(input(inputs, 0, "data"), input(inputs, 1, "shape"));
  if (op == "Slice") return slice(inputs);
  if (op == "Transpose") return transpose(n, input(inputs, 0, "data"));
  if (op == "Cast") return cast(n, input(inputs, 0, "input"));
  throw InputError(fmt::format("{} is not folded", op));
}

}  // namespace convlab::onnx_import
