#include "models/quantized_file.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

namespace {

// The file's name for a layer's output quantisation: the module whose output it is.
std::string quant_name(const Layer& l) {
  if (l.kind == LayerKind::add) return l.name + (l.relu ? ".add_relu" : ".add");
  return l.name;
}

bool has_own_quantisation(const Layer& l) { return has_int8_weights(l) || l.kind == LayerKind::add; }

std::vector<std::int64_t> weight_shape(const Layer& l) {
  if (l.kind == LayerKind::linear) return {l.out_item.c(), static_cast<std::int64_t>(l.weight.size()) / l.out_item.c()};
  return {l.conv.k, l.conv.c_per_group(), l.conv.r, l.conv.s};
}

StoredTensor floats(std::vector<std::int64_t> shape, std::vector<float> values) {
  return {.dtype = "F32", .shape = std::move(shape), .values = std::move(values)};
}

class Reader {
 public:
  Reader(const TensorFile& file, std::string label) : file_(file), label_(std::move(label)) {}

  const StoredTensor& get(const std::string& name, std::initializer_list<const char*> dtypes,
                          const std::vector<std::int64_t>& shape, bool scalar = false) {
    const auto it = file_.tensors.find(name);
    if (it == file_.tensors.end()) throw fail(name, "is missing");
    used_.insert(name);
    const StoredTensor& t = it->second;
    bool dtype_ok = false;
    for (const char* d : dtypes) dtype_ok |= t.dtype == d;
    if (!dtype_ok) throw fail(name, fmt::format("has dtype {}, not {}", t.dtype, fmt::join(dtypes, " or ")));
    const bool shape_ok = scalar ? t.shape.empty() || t.shape == std::vector<std::int64_t>{1} : t.shape == shape;
    if (!shape_ok)
      throw fail(name, fmt::format("has shape [{}], the network needs [{}]", fmt::join(t.shape, ", "),
                                   scalar ? "] or [1" : fmt::format("{}", fmt::join(shape, ", "))));
    return t;
  }

  QuantParams params(const std::string& module) {
    const StoredTensor& scale = get(module + ".scale", {"F32"}, {}, true);
    const StoredTensor& zero = get(module + ".zero_point", {"I64", "I32"}, {}, true);
    const QuantParams q{.scale = scale.values[0], .zero_point = static_cast<std::int32_t>(zero.integers[0])};
    if (zero.integers[0] < 0 || zero.integers[0] > 255) throw fail(module + ".zero_point", fmt::format("{} is outside [0, 255]", zero.integers[0]));
    if (!(std::isfinite(q.scale) && q.scale > 0)) throw fail(module + ".scale", fmt::format("{} must be finite and positive", q.scale));
    return q;
  }

  void refuse_unused() const {
    for (const auto& [name, t] : file_.tensors)
      if (!used_.contains(name)) throw fail(name, "is not a tensor of this network's int8 model");
  }

  InputError fail(const std::string& name, const std::string& what) const {
    return InputError(fmt::format("{}: tensor '{}' {}", label_, name, what));
  }

  void mark_used(const std::string& name) { used_.insert(name); }
  const TensorFile& file() const { return file_; }

 private:
  const TensorFile& file_;
  std::string label_;
  std::set<std::string> used_;
};

}  // namespace

TensorFile quantized_tensors(const QuantizedNetwork& q) {
  TensorFile f;
  const auto scalar_params = [&f](const std::string& module, QuantParams p) {
    f.tensors[module + ".scale"] = floats({}, {p.scale});
    f.tensors[module + ".zero_point"] = {.dtype = "I64", .shape = {}, .integers = {p.zero_point}};
  };
  scalar_params("quant", q.input());
  const auto& layers = q.network().layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    if (!has_own_quantisation(l)) continue;
    scalar_params(quant_name(l), q.activation(static_cast<int>(i)));
    if (!has_int8_weights(l)) continue;
    const QuantizedWeights& w = q.weights(static_cast<int>(i));
    const std::int64_t k = static_cast<std::int64_t>(w.weight_scale.size());
    f.tensors[l.name + ".weight"] = {.dtype = "I8", .shape = weight_shape(l), .integers = {w.weight.begin(), w.weight.end()}};
    f.tensors[l.name + ".weight_scale"] = floats({k}, w.weight_scale);
    f.tensors[l.name + ".bias"] = floats({k}, w.bias.empty() ? std::vector<float>(static_cast<std::size_t>(k), 0.0f) : w.bias);
  }
  f.metadata["format"] = "convlab int8 (issue 18): PyTorch onednn-engine quantisation";
  f.metadata["model"] = q.network().name();
  f.metadata["source"] = q.source();
  return f;
}

QuantizedNetwork load_quantized(const Network& net, const TensorFile& file, const std::string& label) {
  Reader in(file, label);
  if (std::ranges::none_of(file.tensors, [](const auto& t) { return t.second.dtype == "I8"; }))
    throw InputError(fmt::format("{}: holds no I8 weights, so it is not an int8 interchange file (an FP32 state_dict?): "
                                 "make one with `convlab quantize` or tools/export_torch.py --quantize int8", label));
  const QuantParams input = in.params("quant");
  std::vector<QuantParams> activations;
  std::vector<QuantizedWeights> weights;
  for (const Layer& l : net.layers()) {
    activations.push_back(has_own_quantisation(l) ? in.params(quant_name(l)) : QuantParams{});
    weights.emplace_back();
    if (!has_int8_weights(l)) continue;
    const std::vector<std::int64_t> shape = weight_shape(l);
    const StoredTensor& w = in.get(l.name + ".weight", {"I8"}, shape);
    QuantizedWeights& q = weights.back();
    q.weight.assign(w.integers.begin(), w.integers.end());
    q.weight_scale = in.get(l.name + ".weight_scale", {"F32"}, {shape[0]}).values;
    q.bias = in.get(l.name + ".bias", {"F32"}, {shape[0]}).values;
    for (std::size_t k = 0; k < q.weight_scale.size(); ++k)
      if (!(std::isfinite(q.weight_scale[k]) && q.weight_scale[k] > 0))
        throw in.fail(l.name + ".weight_scale", fmt::format("[{}] = {} must be finite and positive", k, q.weight_scale[k]));
    if (const auto it = file.tensors.find(l.name + ".weight_zero_point"); it != file.tensors.end()) {
      in.mark_used(it->first);
      for (const std::int64_t z : it->second.integers)
        if (z != 0) throw in.fail(it->first, fmt::format("holds {}: weights must be symmetric (zero point 0)", z));
    }
  }
  in.refuse_unused();
  return QuantizedNetwork(net, input, std::move(activations), std::move(weights), "file " + label);
}

}  // namespace convlab
