#include "models/onnx_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/read_file.hpp"

#ifdef CONVLAB_WITH_ONNX
#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h

#include "models/batchnorm.hpp"
#include "models/onnx_constants.hpp"
#include "models/safetensors.hpp"
#endif

namespace convlab {

bool is_onnx_model(std::string_view model) { return model.ends_with(".onnx"); }

Network load_onnx(const std::string& path) { return onnx_network(read_file(path), path); }

#ifndef CONVLAB_WITH_ONNX

Network onnx_network(const std::string&, const std::string& label) {
  throw InputError(fmt::format("{}: this convlab was built without ONNX import (it needs Debian's libonnx-dev and "
                               "libprotobuf-dev: tools/bootstrap.sh installs them; then rebuild)",
                               label));
}

#else

namespace {

constexpr int kMinOpset = 11, kMaxOpset = 17;
constexpr const char* kSupported =
    "Conv, BatchNormalization (after a Conv), Relu and Clip(0, 6) (after a Conv, Gemm or Add), MaxPool, AveragePool, "
    "GlobalAveragePool, Add, Flatten, Reshape (to 2-D), Gemm, MatMul (+ Add), Softmax (over the classes), Identity, "
    "Dropout, Pad (of zeros, before a Conv; of nothing elsewhere), Constant; and on constants (PyTorch computes "
    "F.pad's pads so) ConstantOfShape, Concat, Reshape, Slice, Transpose, Cast";

using onnx_import::Constant;

// A conv, linear or add whose activation (or BatchNorm, or bias) may still be fused from the nodes
// after it; emitted into the network when its value is first needed.
struct Pending {
  LayerKind kind;
  std::string op;      // the ONNX node that made it, for messages
  std::vector<int> inputs;  // layers (already emitted)
  ConvProblem geometry;     // conv
  std::vector<float> weight, bias;
  Activation activation = Activation::none;
  std::int64_t out_features = 0;  // linear
};

struct Value {
  std::optional<int> layer;    // emitted: its index, or Network::kNetworkInput
  std::optional<int> pending;  // not yet: its index in the importer's pending list
  // Zeros a Pad put around the layer's output (top, left, bottom, right), for the Conv that reads
  // it to take as its own padding: no layer materialises them.
  std::array<std::int64_t, 4> zero_pads{};
};

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string label) : model_(model), label_(std::move(label)) {}

  Network build() {
    check_opset();
    const onnx::GraphProto& g = model_.graph();
    for (const onnx::TensorProto& t : g.initializer()) constants_[t.name()] = constant(t);
    find_input(g);
    for (const onnx::NodeProto& n : g.node())
      for (const std::string& in : n.input()) ++consumers_[in];
    if (g.output_size() < 1) throw fail("the graph has no output");
    for (const onnx::ValueInfoProto& o : g.output()) ++consumers_[o.name()];
    name_graph_outputs(g);
    for (const onnx::NodeProto& n : g.node()) translate(n);
    for (int i = 1; i < g.output_size(); ++i) layer_of(g.output(i).name(), "the graph output");
    const int out = layer_of(g.output(0).name(), "the graph output");
    if (out != static_cast<int>(net_->layers().size()) - 1)
      throw fail(fmt::format("the graph's first output '{}' is not its last layer", g.output(0).name()));
    return std::move(*net_);
  }

 private:
  InputError fail(const std::string& what) const { return InputError(fmt::format("{}: {}", label_, what)); }
  InputError fail(const onnx::NodeProto& n, const std::string& what) const {
    return fail(fmt::format("node '{}' ({}): {}", node_name(n), n.op_type(), what));
  }
  static std::string node_name(const onnx::NodeProto& n) {
    return !n.name().empty() ? n.name() : n.output_size() > 0 ? n.output(0) : "?";
  }

  void check_opset() {
    bool found = false;
    for (const onnx::OperatorSetIdProto& o : model_.opset_import()) {
      if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
      found = true;
      opset_ = o.version();
      if (o.version() < kMinOpset || o.version() > kMaxOpset)
        throw fail(fmt::format("opset {} is not supported (opsets {} to {}: export with opset_version in that range)",
                               o.version(), kMinOpset, kMaxOpset));
    }
    if (!found) throw fail("no ai.onnx opset is imported: not an ONNX model convlab can read");
  }

  Constant constant(const onnx::TensorProto& t) const {
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL || t.external_data_size() > 0)
      throw fail(fmt::format("tensor '{}' keeps its data in an external file, which convlab does not read (export the "
                             "model into one file)", t.name()));
    Constant c{.shape = {t.dims().begin(), t.dims().end()}};
    std::int64_t n = 1;
    for (const std::int64_t d : c.shape) {
      if (d < 0 || d > (std::int64_t{1} << 31)) throw fail(fmt::format("tensor '{}' has a dimension of {}", t.name(), d));
      n *= d;  // at most 2^31 x 2^31: the check below stops it before another factor
      if (n > (std::int64_t{1} << 31)) throw fail(fmt::format("tensor '{}' has over 2^31 elements", t.name()));
    }
    const std::string& raw = t.raw_data();
    const auto from_raw = [&](std::size_t bytes, auto convert) {
      if (raw.size() != static_cast<std::size_t>(n) * bytes)
        throw fail(fmt::format("tensor '{}' holds {} bytes, its shape needs {}", t.name(), raw.size(), n * bytes));
      for (std::int64_t i = 0; i < n; ++i) c.values.push_back(convert(raw.data() + i * bytes));
    };
    const auto check_count = [&](int count) {
      if (count != n) throw fail(fmt::format("tensor '{}' holds {} values, its shape needs {}", t.name(), count, n));
    };
    switch (t.data_type()) {
      case onnx::TensorProto_DataType_FLOAT:
        if (!raw.empty()) {
          from_raw(4, [](const char* p) { float v; std::memcpy(&v, p, 4); return double{v}; });
        } else {
          check_count(t.float_data_size());
          c.values.assign(t.float_data().begin(), t.float_data().end());
        }
        break;
      case onnx::TensorProto_DataType_FLOAT16:
        if (!raw.empty()) {
          from_raw(2, [](const char* p) { std::uint16_t h; std::memcpy(&h, p, 2); return double{half_to_float(h)}; });
        } else {
          check_count(t.int32_data_size());
          for (const std::int32_t h : t.int32_data()) c.values.push_back(half_to_float(static_cast<std::uint16_t>(h)));
        }
        break;
      case onnx::TensorProto_DataType_DOUBLE:
        if (!raw.empty()) {
          from_raw(8, [](const char* p) { double v; std::memcpy(&v, p, 8); return v; });
        } else {
          check_count(t.double_data_size());
          c.values.assign(t.double_data().begin(), t.double_data().end());
        }
        break;
      case onnx::TensorProto_DataType_INT64:
        if (!raw.empty()) {
          from_raw(8, [](const char* p) { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); });
        } else {
          check_count(t.int64_data_size());
          for (const std::int64_t v : t.int64_data()) c.values.push_back(static_cast<double>(v));
        }
        break;
      default:
        throw fail(fmt::format("tensor '{}' has data type {}: convlab reads float32, float16, float64 and int64 tensors",
                               t.name(), t.data_type()));
    }
    return c;
  }

  void find_input(const onnx::GraphProto& g) {
    std::vector<const onnx::ValueInfoProto*> inputs;
    for (const onnx::ValueInfoProto& v : g.input())
      if (!constants_.contains(v.name())) inputs.push_back(&v);  // older exporters list initializers as inputs too
    if (inputs.size() != 1)
      throw fail(fmt::format("the graph has {} inputs; convlab runs networks of one input image tensor", inputs.size()));
    const onnx::ValueInfoProto& in = *inputs[0];
    if (!in.type().has_tensor_type() || in.type().tensor_type().elem_type() != onnx::TensorProto_DataType_FLOAT)
      throw fail(fmt::format("input '{}' is not a float32 tensor", in.name()));
    const onnx::TensorShapeProto& shape = in.type().tensor_type().shape();
    if (shape.dim_size() != 4) throw fail(fmt::format("input '{}' has {} dimensions, not N x C x H x W", in.name(), shape.dim_size()));
    std::int64_t d[3];
    for (int i = 1; i < 4; ++i) {
      if (!shape.dim(i).has_dim_value() || shape.dim(i).dim_value() < 1)
        throw fail(fmt::format("input '{}': dimension {} ({}) is not a fixed size; convlab needs C, H and W fixed (the "
                               "batch may be free: runs use --batch)",
                               in.name(), i, shape.dim(i).has_dim_param() ? shape.dim(i).dim_param() : "unknown"));
      d[i - 1] = shape.dim(i).dim_value();
    }
    const std::string stem = std::filesystem::path(label_).stem().string();
    auto weights = weights_;
    net_.emplace(stem.empty() ? "onnx" : stem, nchw(1, d[0], d[1], d[2]),
                 [weights](const std::string& name, const std::vector<std::int64_t>&, std::int64_t) {
                   return weights->at(name);  // every name asked for was just stored
                 });
    values_[in.name()] = Value{.layer = Network::kNetworkInput};
  }

  // A value that is only passed along (Identity, Dropout, Flatten, Reshape) to a graph output gives
  // its layer the output's name: tools/export_torch.py --onnx names each layer's output so.
  void name_graph_outputs(const onnx::GraphProto& g) {
    std::set<std::string> outputs;
    for (int i = 0; i < g.output_size(); ++i) outputs.insert(g.output(i).name());
    const std::string& network_output = g.output(0).name();
    for (int i = g.node_size() - 1; i >= 0; --i) {
      const onnx::NodeProto& n = g.node(i);
      static const std::set<std::string> kPassing = {"Identity", "Dropout", "Flatten", "Reshape"};
      if (!kPassing.contains(n.op_type()) || n.input_size() < 1 || n.output_size() < 1) continue;
      const auto named = names_.find(n.output(0));
      const std::string name = named != names_.end() ? named->second : outputs.contains(n.output(0)) ? n.output(0) : "";
      if (name.empty()) continue;
      // A layer handed to several outputs takes an intermediate one's name (a tap) over the network's.
      const auto current = names_.find(n.input(0));
      if (current == names_.end() || (current->second == network_output && name != network_output)) names_[n.input(0)] = name;
    }
  }
  std::string layer_name(const std::string& value) const {
    const auto it = names_.find(value);
    return it != names_.end() ? it->second : value;
  }

  // The emitted layer of a value, emitting it when it is still pending.
  // `padded_ok`: the reader is a Conv, which takes a Pad's zeros as its own padding.
  int layer_of(const std::string& value, const std::string& user, bool padded_ok = false) {
    const auto it = values_.find(value);
    if (it == values_.end())
      throw fail(fmt::format("{} reads '{}', which no earlier node makes (the nodes must be in topological order)",
                             user, value));
    Value& v = it->second;
    if (!padded_ok && std::ranges::any_of(v.zero_pads, [](std::int64_t p) { return p != 0; }))
      throw fail(fmt::format("{} reads '{}', the output of a Pad: convlab folds a Pad of zeros only into the Conv "
                             "that reads it",
                             user, value));
    if (!v.layer) v.layer = emit(pending_.at(static_cast<std::size_t>(*v.pending)), layer_name(value));
    return *v.layer;
  }
  int layer_of(const onnx::NodeProto& n, int input, bool padded_ok = false) {
    if (input >= n.input_size() || n.input(input).empty()) throw fail(n, fmt::format("has no input {}", input));
    return layer_of(n.input(input), fmt::format("node '{}'", node_name(n)), padded_ok);
  }

  int emit(Pending& p, const std::string& name) {
    if (name_used_.contains(name)) throw fail(fmt::format("two layers would be named '{}'", name));
    name_used_.insert(name);
    (*weights_)[name + ".weight"] = std::move(p.weight);
    if (!p.bias.empty()) (*weights_)[name + ".bias"] = std::move(p.bias);
    try {
      switch (p.kind) {
        case LayerKind::conv: return net_->conv(name, p.inputs[0], p.geometry, weights_->contains(name + ".bias"), p.activation);
        case LayerKind::linear: {
          if (!weights_->contains(name + ".bias")) (*weights_)[name + ".bias"] = std::vector<float>(static_cast<std::size_t>(p.out_features), 0.0f);
          const std::int64_t in = item(p.inputs[0]).item_elems();
          if (static_cast<std::int64_t>((*weights_)[name + ".weight"].size()) != p.out_features * in)
            throw fail(fmt::format("node '{}' (Gemm/MatMul): its weight has {} values, not {} x {} features", p.op,
                                   (*weights_)[name + ".weight"].size(), p.out_features, in));
          if (p.activation == Activation::relu6) throw fail(fmt::format("node '{}': a Clip(0, 6) after a Gemm is not supported", p.op));
          return net_->linear(name, p.inputs[0], p.out_features, p.activation == Activation::relu);
        }
        case LayerKind::add:
          if (p.activation == Activation::relu6) throw fail(fmt::format("node '{}': a Clip(0, 6) after an Add is not supported", p.op));
          return net_->add(name, p.inputs[0], p.inputs[1], p.activation == Activation::relu);
        default: break;
      }
    } catch (const InputError& e) {
      throw fail(fmt::format("node '{}': {}", p.op, e.what()));
    }
    throw fail("internal: nothing to emit");
  }

  Shape item(int layer) const { return layer == Network::kNetworkInput ? net_->input_item() : net_->layers().at(static_cast<std::size_t>(layer)).out_item; }

  const Constant& constant_input(const onnx::NodeProto& n, int input, const char* role) const {
    if (input >= n.input_size() || n.input(input).empty()) throw fail(n, fmt::format("has no {}", role));
    const auto it = constants_.find(n.input(input));
    if (it == constants_.end())
      throw fail(n, fmt::format("its {} '{}' is not an initializer or a Constant (convlab needs it fixed)", role, n.input(input)));
    return it->second;
  }
  static std::vector<float> floats(const Constant& c) { return {c.values.begin(), c.values.end()}; }

  // The node's attribute `name`, or `fallback`.
  static const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
    for (const onnx::AttributeProto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  static std::int64_t int_attr(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
    const onnx::AttributeProto* a = attribute(n, name);
    return a != nullptr ? a->i() : fallback;
  }
  static float float_attr(const onnx::NodeProto& n, const std::string& name, float fallback) {
    const onnx::AttributeProto* a = attribute(n, name);
    return a != nullptr ? a->f() : fallback;
  }
  std::vector<std::int64_t> ints_attr(const onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> fallback,
                                      std::size_t size) const {
    const onnx::AttributeProto* a = attribute(n, name);
    if (a == nullptr) return fallback;
    std::vector<std::int64_t> v(a->ints().begin(), a->ints().end());
    if (v.size() != size) throw fail(n, fmt::format("attribute {} has {} values, not {}", name, v.size(), size));
    for (const std::int64_t x : v)
      if (x < 0 || x > (std::int64_t{1} << 24)) throw fail(n, fmt::format("attribute {} holds {}", name, x));
    return v;
  }

  // Padding from pads or auto_pad: top, left, bottom, right.
  std::array<std::int64_t, 4> padding(const onnx::NodeProto& n, const Shape& in, std::int64_t kh, std::int64_t kw,
                                                std::int64_t sh, std::int64_t sw, std::int64_t dh, std::int64_t dw) const {
    const onnx::AttributeProto* ap = attribute(n, "auto_pad");
    const std::string mode = ap != nullptr ? ap->s() : "NOTSET";
    std::vector<std::int64_t> pads = ints_attr(n, "pads", {0, 0, 0, 0}, 4);  // top, left, bottom, right
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      const std::int64_t size[2] = {in.h(), in.w()}, k[2] = {kh, kw}, s[2] = {sh, sw}, d[2] = {dh, dw};
      for (int a = 0; a < 2; ++a) {
        const std::int64_t out = (size[a] + s[a] - 1) / s[a];
        const std::int64_t total = std::max<std::int64_t>((out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - size[a], 0);
        const std::int64_t small = total / 2;
        pads[a] = mode == "SAME_UPPER" ? small : total - small;
        pads[a + 2] = total - pads[a];
      }
    } else if (mode == "VALID") {
      pads = {0, 0, 0, 0};
    } else if (mode != "NOTSET") {
      throw fail(n, fmt::format("auto_pad '{}' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", mode));
    }
    return {pads[0], pads[1], pads[2], pads[3]};
  }

  // Identity, Dropout, Flatten, Reshape: the output is the input's layer (convlab's layers read
  // their input flat where they need to). A pending op is emitted first: nothing fuses across.
  void alias(const onnx::NodeProto& n) {
    if (const auto c = constants_.find(n.input(0)); c != constants_.end() && n.op_type() == "Identity") {
      constants_[n.output(0)] = c->second;  // PyTorch's exporter hands shared initializers on so
      return;
    }
    layer_of(n, 0, /*padded_ok=*/n.op_type() == "Pad");  // a Pad after a Pad adds up
    values_[n.output(0)] = values_.at(n.input(0));
  }

  // The pending op of input 0 when it can take a fusion: pending, and read by this node alone.
  Pending* fusable(const onnx::NodeProto& n) {
    const auto it = values_.find(n.input(0));
    if (it == values_.end() || !it->second.pending || it->second.layer || consumers_[n.input(0)] != 1) return nullptr;
    return &pending_[static_cast<std::size_t>(*it->second.pending)];
  }
  void hand_on(const onnx::NodeProto& n) { values_[n.output(0)] = values_[n.input(0)]; }

  void translate(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx") throw fail(n, fmt::format("domain '{}' is not ONNX's", n.domain()));
    if (n.output_size() < 1 || n.output(0).empty()) throw fail(n, "has no output");
    if (op != "Constant" && (n.input_size() < 1 || n.input(0).empty())) throw fail(n, "has no input");
    if (onnx_import::foldable(n) && std::ranges::all_of(n.input(), [&](const std::string& i) {
          return i.empty() || constants_.contains(i);
        })) {
      std::vector<const Constant*> inputs;
      for (const std::string& i : n.input()) inputs.push_back(i.empty() ? nullptr : &constants_.at(i));
      try {
        constants_[n.output(0)] = onnx_import::fold(n, inputs);
      } catch (const InputError& e) {
        throw fail(n, e.what());
      }
    } else if (op == "Constant") {
      const onnx::AttributeProto* v = attribute(n, "value");
      if (v == nullptr || !v->has_t()) throw fail(n, "holds no tensor value (value_float and the like are not supported)");
      constants_[n.output(0)] = constant(v->t());
    } else if (op == "Identity" || op == "Dropout" || op == "Flatten" || op == "Reshape" || op == "Pad") {
      if (op == "Flatten" && int_attr(n, "axis", 1) != 1) throw fail(n, "flattens from an axis other than 1");
      if (op == "Reshape") check_reshape(n);
      const std::array<std::int64_t, 4> pads = op == "Pad" ? zero_pads(n) : std::array<std::int64_t, 4>{};
      alias(n);
      for (int i = 0; i < 4; ++i) values_[n.output(0)].zero_pads[i] += pads[i];
      if (op == "Flatten" || op == "Reshape") flat_.insert(n.output(0));
    } else if (op == "Conv") {
      conv(n);
    } else if (op == "BatchNormalization") {
      batchnorm(n);
    } else if (op == "Relu" || op == "Clip") {
      activation(n);
    } else if (op == "MaxPool" || op == "AveragePool") {
      pool(n);
    } else if (op == "GlobalAveragePool") {
      values_[n.output(0)] = Value{.layer = net_->global_avg_pool(layer_name(n.output(0)), layer_of(n, 0))};
    } else if (op == "Add") {
      add(n);
    } else if (op == "Gemm" || op == "MatMul") {
      gemm(n);
    } else if (op == "Softmax") {
      softmax(n);
    } else {
      throw fail(n, fmt::format("is not supported (supported: {})", kSupported));
    }
  }

  void check_reshape(const onnx::NodeProto& n) const {
    const Constant& shape = constant_input(n, 1, "shape");
    const bool flat = shape.values.size() == 2 && (shape.values[0] == 0 || shape.values[0] == -1 || shape.values[0] == 1) &&
                      shape.values[1] != 0;
    if (!flat) throw fail(n, "reshapes to other than [batch, features] (only a flatten to 2-D is supported)");
  }

  // A Pad's spatial zeros (top, left, bottom, right), for the Conv after it. PyTorch exports
  // F.avg_pool2d as a Pad (of nothing) before the AveragePool, F.pad before a Conv as a Pad of
  // zeros (so do TensorFlow's converters for SAME padding).
  std::array<std::int64_t, 4> zero_pads(const onnx::NodeProto& n) const {
    const Constant& pads = constant_input(n, 1, "pads");  // begins then ends, per axis: N, C, H, W
    const auto& v = pads.values;
    if (v.size() != 8) throw fail(n, fmt::format("has {} pads, not 8 (a 4-D tensor's)", v.size()));
    if (std::ranges::all_of(v, [](double x) { return x == 0; })) return {};
    const onnx::AttributeProto* mode = attribute(n, "mode");
    if (mode != nullptr && mode->s() != "constant")
      throw fail(n, fmt::format("pads in mode '{}'; convlab pads with zeros only (mode constant)", mode->s()));
    if (n.input_size() > 2 && !n.input(2).empty()) {
      const Constant& value = constant_input(n, 2, "constant_value");
      if (std::ranges::any_of(value.values, [](double x) { return x != 0; }))
        throw fail(n, "pads with a value other than 0; convlab pads with zeros only");
    }
    if (v[0] != 0 || v[1] != 0 || v[4] != 0 || v[5] != 0) throw fail(n, "pads the batch or channel axis (only height and width)");
    for (const double x : v)  // NaN passes every comparison below, and casts to int64 undefined
      if (!std::isfinite(x) || x != std::floor(x)) throw fail(n, fmt::format("pads by {}, not a whole number of pixels", x));
    if (std::ranges::any_of(v, [](double x) { return x < 0 || x > (1 << 24); }))
      throw fail(n, "pads by a negative or out-of-range amount (a crop)");
    return {static_cast<std::int64_t>(v[2]), static_cast<std::int64_t>(v[3]), static_cast<std::int64_t>(v[6]),
            static_cast<std::int64_t>(v[7])};
  }

  void conv(const onnx::NodeProto& n) {
    const int input = layer_of(n, 0, /*padded_ok=*/true);
    const std::array<std::int64_t, 4> padded = values_.at(n.input(0)).zero_pads;
    const Shape in = item(input);
    const Constant& w = constant_input(n, 1, "weight");
    if (w.shape.size() != 4) throw fail(n, fmt::format("its weight has {} dimensions, not 4 (2-D convolutions only)", w.shape.size()));
    const std::int64_t groups = int_attr(n, "group", 1);
    const auto dil = ints_attr(n, "dilations", {1, 1}, 2), strides = ints_attr(n, "strides", {1, 1}, 2);
    const auto kernel = ints_attr(n, "kernel_shape", {w.shape[2], w.shape[3]}, 2);
    if (kernel[0] != w.shape[2] || kernel[1] != w.shape[3]) throw fail(n, "kernel_shape differs from its weight's");
    if (groups < 1 || in.c() % groups != 0 || w.shape[0] % groups != 0 || w.shape[1] * groups != in.c())
      throw fail(n, fmt::format("its weight [{}, {}, ...] with group {} does not fit an input of {} channels", w.shape[0],
                                w.shape[1], groups, in.c()));
    // auto_pad SAME sizes its padding for the tensor as padded by the Pad.
    const Shape padded_in = nchw(1, in.c(), in.h() + padded[0] + padded[2], in.w() + padded[1] + padded[3]);
    auto [top, left, bottom, right] = padding(n, padded_in, w.shape[2], w.shape[3], strides[0], strides[1], dil[0], dil[1]);
    top += padded[0], left += padded[1], bottom += padded[2], right += padded[3];
    Pending p{.kind = LayerKind::conv, .op = node_name(n), .inputs = {input}};
    p.geometry = ConvProblem{.c = in.c(), .h = in.h(), .w = in.w(), .k = w.shape[0], .r = w.shape[2], .s = w.shape[3],
                             .stride_h = strides[0], .stride_w = strides[1], .pad_h = top, .pad_w = left,
                             .dilation_h = dil[0], .dilation_w = dil[1], .groups = groups}
                     .with_end_padding(bottom, right);
    p.weight = floats(w);
    if (n.input_size() > 2 && !n.input(2).empty()) {
      p.bias = floats(constant_input(n, 2, "bias"));
      if (static_cast<std::int64_t>(p.bias.size()) != w.shape[0]) throw fail(n, "its bias does not have one value per output channel");
    }
    add_pending(n, std::move(p));
  }

  void batchnorm(const onnx::NodeProto& n) {
    Pending* conv = fusable(n);
    if (conv == nullptr || conv->kind != LayerKind::conv || conv->activation != Activation::none)
      throw fail(n, "does not follow a Conv that feeds it alone (convlab folds BatchNormalization into the Conv before it)");
    const auto channel_vector = [&](int input, const char* role) {
      std::vector<float> v = floats(constant_input(n, input, role));
      if (static_cast<std::int64_t>(v.size()) != conv->geometry.k)
        throw fail(n, fmt::format("its {} has {} values, the Conv {} channels", role, v.size(), conv->geometry.k));
      return v;
    };
    const BatchNormParams bn{.weight = channel_vector(1, "scale"), .bias = channel_vector(2, "bias"),
                             .running_mean = channel_vector(3, "mean"), .running_var = channel_vector(4, "variance"),
                             .eps = float_attr(n, "epsilon", 1e-5f)};
    try {
      fold_batchnorm(bn, conv->weight, conv->bias);
    } catch (const InputError& e) {
      throw fail(n, e.what());
    }
    hand_on(n);
  }

  void activation(const onnx::NodeProto& n) {
    Activation a = Activation::relu;
    if (n.op_type() == "Clip") {
      const auto bound = [&](int input, const char* attr, float fallback) {
        if (input < n.input_size() && !n.input(input).empty()) {
          const Constant& c = constant_input(n, input, attr);
          if (c.values.size() != 1) throw fail(n, fmt::format("its {} is not a scalar", attr));
          return static_cast<float>(c.values[0]);
        }
        return float_attr(n, attr, fallback);
      };
      const float lo = bound(1, "min", -INFINITY), hi = bound(2, "max", INFINITY);
      if (lo != 0.0f || (hi != 6.0f && hi != INFINITY))
        throw fail(n, fmt::format("clips to [{}, {}]; convlab runs Clip(0, 6) (ReLU6) and Clip(0) (ReLU)", lo, hi));
      a = hi == 6.0f ? Activation::relu6 : Activation::relu;
    }
    Pending* p = fusable(n);
    if (p == nullptr)
      throw fail(n, "does not follow a Conv, Gemm or Add that feeds it alone (convlab fuses activations into those)");
    // One after the other they are the tighter clamp: PyTorch exports F.relu6 as Relu, then Clip(0, 6).
    p->activation = p->activation == Activation::relu6 || a == Activation::relu6 ? Activation::relu6 : Activation::relu;
    hand_on(n);
  }

  void pool(const onnx::NodeProto& n) {
    const int input = layer_of(n, 0);
    const Shape in = item(input);
    const auto kernel = ints_attr(n, "kernel_shape", {}, 2);
    if (kernel.empty()) throw fail(n, "has no kernel_shape");
    const auto strides = ints_attr(n, "strides", {1, 1}, 2), dil = ints_attr(n, "dilations", {1, 1}, 2);
    if (kernel[0] != kernel[1] || strides[0] != strides[1] || dil[0] != 1 || dil[1] != 1)
      throw fail(n, "is not square with equal strides and no dilation (convlab's pools are)");
    if (int_attr(n, "ceil_mode", 0) != 0) throw fail(n, "uses ceil_mode; convlab's pools round down (floor mode)");
    const auto [ph, pw, bottom, right] = padding(n, in, kernel[0], kernel[1], strides[0], strides[1], 1, 1);
    if (ph != bottom || pw != right)
      throw fail(n, fmt::format("its padding differs between the sides (top {}, left {}, bottom {}, right {}): convlab's "
                                "pools pad each axis evenly (its convolutions need not)",
                                ph, pw, bottom, right));
    if (ph != pw) throw fail(n, "pads the two axes differently");
    const bool average = n.op_type() == "AveragePool";
    if (average && ph > 0 && int_attr(n, "count_include_pad", 0) == 0)
      throw fail(n, "excludes the padding from its averages (count_include_pad 0); convlab counts it, as PyTorch's default");
    const ops::Pool2d pool{.kernel = kernel[0], .stride = strides[0], .pad = ph};
    const std::string name = layer_name(n.output(0));
    try {
      values_[n.output(0)] = Value{.layer = average ? net_->avg_pool(name, input, pool) : net_->max_pool(name, input, pool)};
    } catch (const InputError& e) {
      throw fail(n, e.what());
    }
  }

  void add(const onnx::NodeProto& n) {
    if (n.input_size() != 2) throw fail(n, "does not add two tensors");
    for (int i = 0; i < 2; ++i) {
      if (!constants_.contains(n.input(i))) continue;
      // MatMul + Add: the Add of a constant is the linear layer's bias.
      const auto it = values_.find(n.input(1 - i));
      Pending* p = it != values_.end() && it->second.pending && !it->second.layer && consumers_[n.input(1 - i)] == 1
                       ? &pending_[static_cast<std::size_t>(*it->second.pending)]
                       : nullptr;
      if (p == nullptr || p->kind != LayerKind::linear || !p->bias.empty() || p->activation != Activation::none)
        throw fail(n, "adds a constant other than a MatMul's bias");
      p->bias = floats(constants_.at(n.input(i)));
      if (static_cast<std::int64_t>(p->bias.size()) != p->out_features) throw fail(n, "its bias does not have one value per output");
      values_[n.output(0)] = it->second;
      flat_.insert(n.output(0));
      return;
    }
    add_pending(n, Pending{.kind = LayerKind::add, .op = node_name(n), .inputs = {layer_of(n, 0), layer_of(n, 1)}});
  }

  void gemm(const onnx::NodeProto& n) {
    const int input = layer_of(n, 0);
    const Shape in_item = item(input);
    if (in_item.h() * in_item.w() != 1 && !flat_.contains(n.input(0)))
      throw fail(n, "multiplies a tensor that is not [batch, features]; convlab runs Gemm and MatMul as linear "
                    "layers (Flatten first)");
    const Constant& w = constant_input(n, 1, "weight");
    if (w.shape.size() != 2) throw fail(n, "its weight is not a matrix");
    const bool matmul = n.op_type() == "MatMul";
    if (!matmul && (float_attr(n, "alpha", 1) != 1 || int_attr(n, "transA", 0) != 0))
      throw fail(n, "scales or transposes its input (alpha, transA); convlab runs Gemm as a linear layer");
    const bool transposed = !matmul && int_attr(n, "transB", 0) != 0;  // [out, in], PyTorch's Linear layout
    const std::int64_t out = transposed ? w.shape[0] : w.shape[1], in = transposed ? w.shape[1] : w.shape[0];
    Pending p{.kind = LayerKind::linear, .op = node_name(n), .inputs = {input}, .out_features = out};
    p.weight.resize(static_cast<std::size_t>(out * in));
    for (std::int64_t o = 0; o < out; ++o)
      for (std::int64_t i = 0; i < in; ++i)
        p.weight[static_cast<std::size_t>(o * in + i)] = static_cast<float>(w.values[static_cast<std::size_t>(transposed ? o * in + i : i * out + o)]);
    if (!matmul && n.input_size() > 2 && !n.input(2).empty()) {
      if (float_attr(n, "beta", 1) != 1) throw fail(n, "scales its bias (beta)");
      p.bias = floats(constant_input(n, 2, "bias"));
      if (static_cast<std::int64_t>(p.bias.size()) != out) throw fail(n, "its bias does not have one value per output");
    }
    add_pending(n, std::move(p));
    flat_.insert(n.output(0));  // a linear layer's output is [batch, features]
  }

  // convlab's softmax is over the classes of [batch, classes] (C of N x C x 1 x 1). Before opset 13
  // ONNX's axis (default 1) flattens from it on, from 13 on (default -1) it is one axis: on a 2-D
  // value both 1 and -1 are the classes; on N x C x 1 x 1 only 1 is (-1 would be the width, 1 wide).
  void softmax(const onnx::NodeProto& n) {
    const int input = layer_of(n, 0);
    const Shape in = item(input);
    const std::int64_t axis = int_attr(n, "axis", opset_ >= 13 ? -1 : 1);
    const bool two_d = flat_.contains(n.input(0));
    if (in.h() * in.w() != 1 || !(axis == 1 || (axis == -1 && two_d)))
      throw fail(n, fmt::format("is over axis {} of a {}; convlab's softmax is over the classes of [batch, classes] "
                                "(axis 1, or -1 after a Gemm, MatMul, Flatten or Reshape)",
                                axis, two_d ? "[batch, features] value" : fmt::format("{} x {} x {} value", in.c(), in.h(), in.w())));
    values_[n.output(0)] = Value{.layer = net_->softmax(layer_name(n.output(0)), input)};
  }

  void add_pending(const onnx::NodeProto& n, Pending p) {
    pending_.push_back(std::move(p));
    values_[n.output(0)] = Value{.pending = static_cast<int>(pending_.size()) - 1};
  }

  const onnx::ModelProto& model_;
  std::string label_;
  std::map<std::string, Constant> constants_;
  std::map<std::string, int> consumers_;  // nodes and graph outputs reading each value
  std::map<std::string, std::string> names_;  // value -> the graph output it is handed to unchanged
  std::map<std::string, Value> values_;
  std::vector<Pending> pending_;
  std::set<std::string> name_used_;
  std::set<std::string> flat_;  // values a Flatten, Reshape, Gemm or MatMul made: [batch, features]
  std::int64_t opset_ = 0;
  std::shared_ptr<std::map<std::string, std::vector<float>>> weights_ = std::make_shared<std::map<std::string, std::vector<float>>>();
  std::optional<Network> net_;
};

}  // namespace

Network onnx_network(const std::string& bytes, const std::string& label) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) || !model.ParseFromString(bytes))
    throw InputError(fmt::format("{}: not a valid ONNX model (the protobuf does not parse: truncated or not ONNX)", label));
  if (!model.has_graph()) throw InputError(fmt::format("{}: the ONNX model holds no graph", label));
  return Importer(model, label).build();
}

#endif

}  // namespace convlab
