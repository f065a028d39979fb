// ONNX import (models/onnx_model.hpp): small graphs written here with the protobuf schema, imported
// into the same network as the builders make, and each way a graph can be refused, by its message.
// PyTorch's own exports are checked against PyTorch by tools/live_validate.py (ctest
// torch_live_validation).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli_test_util.hpp"
#include "kernels/common/error.hpp"
#include "models/batchnorm.hpp"
#include "models/onnx_model.hpp"

using namespace convlab;

#ifdef CONVLAB_WITH_ONNX
#include <onnx/onnx_pb.h>

namespace {

// A graph written node by node; bytes() is the .onnx file.
struct OnnxGraph {
  onnx::ModelProto model;
  onnx::GraphProto* g = model.mutable_graph();

  explicit OnnxGraph(int opset = 13, std::vector<std::int64_t> input = {-1, 3, 8, 8}) {
    model.set_ir_version(7);
    onnx::OperatorSetIdProto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    onnx::ValueInfoProto* in = g->add_input();
    in->set_name("input");
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (const std::int64_t d : input) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d < 0) dim->set_dim_param("batch");
      else dim->set_dim_value(d);
    }
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  onnx::TensorProto& init(const std::string& name, std::vector<std::int64_t> shape, std::vector<float> values) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (const std::int64_t d : shape) t->add_dims(d);
    for (const float v : values) t->add_float_data(v);
    return *t;
  }
  void init_ints(const std::string& name, std::vector<std::int64_t> values) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (const std::int64_t v : values) t->add_int64_data(v);
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs, const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(g->node_size() - 1));
    for (const std::string& i : inputs) n->add_input(i);
    n->add_output(out);
    return *n;
  }
  std::string bytes() const { return model.SerializeAsString(); }
};

void ints(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (const std::int64_t x : v) a->add_ints(x);
}
void one_int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(v);
}

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

// Conv 3 -> 4 (3x3, pad 1, bias) -> BatchNormalization -> Relu -> MaxPool 2 -> GlobalAveragePool
// -> Flatten -> Gemm 4 -> 2 (transB), its layers' outputs named as export_torch.py --onnx names them.
OnnxGraph small_net() {
  OnnxGraph m;
  m.init("w", {4, 3, 3, 3}, ramp(108, 0.1f));
  m.init("b", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
  m.init("gamma", {4}, {1.0f, 0.5f, 2.0f, 1.5f});
  m.init("beta", {4}, {0.0f, 0.1f, -0.1f, 0.2f});
  m.init("mean", {4}, {0.1f, 0.0f, -0.2f, 0.3f});
  m.init("var", {4}, {1.0f, 2.0f, 0.5f, 1.0f});
  m.init("fc_w", {2, 4}, {0.5f, -1.0f, 0.25f, 2.0f, -0.5f, 1.0f, 1.5f, -0.25f});
  m.init("fc_b", {2}, {0.01f, -0.02f});
  onnx::NodeProto& conv = m.node("Conv", {"input", "w", "b"}, "c");
  ints(conv, "pads", {1, 1, 1, 1});
  ints(conv, "kernel_shape", {3, 3});
  m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, "bn");
  m.node("Relu", {"bn"}, "conv1");
  onnx::NodeProto& pool = m.node("MaxPool", {"conv1"}, "pool1");
  ints(pool, "kernel_shape", {2, 2});
  ints(pool, "strides", {2, 2});
  m.node("GlobalAveragePool", {"pool1"}, "gap");
  m.node("Flatten", {"gap"}, "flat");
  one_int(m.node("Gemm", {"flat", "fc_w", "fc_b"}, "output"), "transB", 1);
  m.output("output");
  m.output("conv1");
  return m;
}

std::string refusal(const OnnxGraph& m) {
  try {
    onnx_network(m.bytes(), "m.onnx");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::vector<float> forward(const Network& net, const std::vector<float>& input) {
  NetworkPlan plan(net, 1, KernelSelection{});
  std::ranges::copy(input, plan.input().data());
  plan.forward();
  return {plan.output().span().begin(), plan.output().span().end()};
}

}  // namespace

TEST_CASE("onnx: a graph imports as the network the builders make: BatchNorm folded, ReLU fused, layers named by outputs") {
  const Network net = onnx_network(small_net().bytes(), "small.onnx");
  CHECK(net.name() == "small");
  REQUIRE(net.layers().size() == 4);
  CHECK(net.layers()[0].name == "conv1");  // the Relu's output, a graph output: the layer that makes it
  CHECK(net.layers()[0].epilogue.activation == Activation::relu);
  CHECK(net.layers()[1].kind == LayerKind::max_pool);
  CHECK(net.layers()[2].kind == LayerKind::global_avg_pool);
  CHECK(net.layers()[3].kind == LayerKind::linear);
  CHECK(net.layers()[3].name == "output");
  CHECK(net.input_item() == nchw(1, 3, 8, 8));

  // The same network from the builders, with the weights folded by hand: the same outputs.
  std::vector<float> w = ramp(108, 0.1f), b = {0.1f, -0.2f, 0.3f, 0.0f};
  fold_batchnorm({.weight = {1.0f, 0.5f, 2.0f, 1.5f}, .bias = {0.0f, 0.1f, -0.1f, 0.2f},
                  .running_mean = {0.1f, 0.0f, -0.2f, 0.3f}, .running_var = {1.0f, 2.0f, 0.5f, 1.0f}},
                 w, b);
  const std::map<std::string, std::vector<float>> weights = {
      {"conv1.weight", w}, {"conv1.bias", b}, {"fc.weight", {0.5f, -1.0f, 0.25f, 2.0f, -0.5f, 1.0f, 1.5f, -0.25f}},
      {"fc.bias", {0.01f, -0.02f}}};
  Network built("built", nchw(1, 3, 8, 8), [&](const std::string& name, const auto&, std::int64_t) { return weights.at(name); });
  const int conv = built.conv("conv1", Network::kNetworkInput, 4, 3, 1, 1, 1, true, Activation::relu);
  const int gap = built.global_avg_pool("gap", built.max_pool("pool1", conv, {.kernel = 2, .stride = 2}));
  built.linear("fc", gap, 2, false);
  const std::vector<float> input = ramp(192, 0.25f);
  CHECK(forward(net, input) == forward(built, input));
}

TEST_CASE("onnx: asymmetric padding, from pads, auto_pad SAME or a Pad of zeros before the Conv") {
  // 3 x 8 x 8 ones through a 3x3 stride-2 conv of ones, padded 0 above and left, 1 below and right:
  // the last row and column of windows hang over the zeros.
  const auto net_with = [](const std::string& how) {
    OnnxGraph m(13, {1, 3, 8, 8});
    m.init("w", {2, 3, 3, 3}, std::vector<float>(54, 1.0f));
    std::string in = "input";
    if (how == "pad") {
      m.init_ints("pads", {0, 0, 0, 0, 0, 0, 1, 1});
      m.node("Pad", {"input", "pads"}, "padded");
      in = "padded";
    }
    if (how == "two pads") {  // one below, then one to the right: they add up
      m.init_ints("below", {0, 0, 0, 0, 0, 0, 1, 0});
      m.init_ints("right", {0, 0, 0, 0, 0, 0, 0, 1});
      m.node("Pad", {"input", "below"}, "padded_below");
      m.node("Pad", {"padded_below", "right"}, "padded");
      in = "padded";
    }
    onnx::NodeProto& conv = m.node("Conv", {in, "w"}, "output");
    ints(conv, "strides", {2, 2});
    if (how == "pads") ints(conv, "pads", {0, 0, 1, 1});
    if (how == "same") {
      conv.add_attribute()->set_name("auto_pad");
      conv.mutable_attribute(1)->set_type(onnx::AttributeProto_AttributeType_STRING);
      conv.mutable_attribute(1)->set_s("SAME_UPPER");
    }
    m.output("output");
    return onnx_network(m.bytes(), how + ".onnx");
  };
  const std::vector<float> ones(192, 1.0f);
  for (const char* how : {"pads", "same", "pad", "two pads"}) {
    CAPTURE(how);
    const Network net = net_with(how);
    REQUIRE(net.layers().size() == 1);
    CHECK(net.layers()[0].conv.pad_h == 0);
    CHECK(net.layers()[0].conv.pad_bottom() == 1);
    CHECK(net.layers()[0].conv.pad_right() == 1);
    CHECK(net.output_item() == nchw(1, 2, 4, 4));
    const std::vector<float> out = forward(net, ones);
    CHECK(out[0] == 27.0f);   // a window inside the image
    CHECK(out[3] == 18.0f);   // row 0, column 3: a column of zeros
    CHECK(out[15] == 12.0f);  // row 3, column 3: a row and a column of zeros
  }
  const auto refused = [](const std::string& mode, std::vector<std::int64_t> pads, const std::string& reader) {
    OnnxGraph m(13, {1, 3, 8, 8});
    m.init("w", {2, 3, 3, 3}, std::vector<float>(54, 1.0f));
    m.init_ints("pads", std::move(pads));
    onnx::NodeProto& pad = m.node("Pad", {"input", "pads"}, "padded");
    if (!mode.empty()) {
      onnx::AttributeProto* a = pad.add_attribute();
      a->set_name("mode");
      a->set_type(onnx::AttributeProto_AttributeType_STRING);
      a->set_s(mode);
    }
    if (reader == "Conv") m.node("Conv", {"padded", "w"}, "output");
    else ints(m.node("MaxPool", {"padded"}, "output"), "kernel_shape", {2, 2});
    m.output("output");
    return refusal(m);
  };
  CHECK(refused("reflect", {0, 0, 1, 1, 0, 0, 1, 1}, "Conv") ==
        "m.onnx: node 'Pad_0' (Pad): pads in mode 'reflect'; convlab pads with zeros only (mode constant)");
  CHECK(refused("", {0, 1, 0, 0, 0, 0, 0, 0}, "Conv") ==
        "m.onnx: node 'Pad_0' (Pad): pads the batch or channel axis (only height and width)");
  CHECK(refused("", {0, 0, -1, 0, 0, 0, 0, 0}, "Conv") ==
        "m.onnx: node 'Pad_0' (Pad): pads by a negative or out-of-range amount (a crop)");
  {  // pads as floats (a folded Cast), one of them NaN: found by fuzz_onnx
    OnnxGraph m(13, {1, 3, 8, 8});
    m.init("w", {2, 3, 3, 3}, std::vector<float>(54, 1.0f));
    m.init("pads", {8}, {0, 0, std::numeric_limits<float>::quiet_NaN(), 0, 0, 0, 0, 0});
    m.node("Pad", {"input", "pads"}, "padded");
    m.node("Conv", {"padded", "w"}, "output");
    m.output("output");
    CHECK(refusal(m) == "m.onnx: node 'Pad_0' (Pad): pads by nan, not a whole number of pixels");
  }
  CHECK(refused("", {0, 0, 1, 1, 0, 0, 1, 1}, "MaxPool") ==
        "m.onnx: node 'MaxPool_1' reads 'padded', the output of a Pad: convlab folds a Pad of zeros only into the Conv "
        "that reads it");
}

TEST_CASE("onnx: constants are folded as PyTorch computes F.pad's pads; a bad shape computation is refused by name") {
  // pads [0, 0, 1, 1] for the last two axes, PyTorch's way: zeros for the others, pairs reversed,
  // transposed to ONNX's begins-then-ends order.
  OnnxGraph m(13, {1, 3, 8, 8});
  m.init("w", {2, 3, 3, 3}, std::vector<float>(54, 1.0f));
  m.init_ints("torch_pads", {0, 1, 0, 1});  // F.pad's (left, right, top, bottom)
  m.init_ints("four", {4});
  m.node("ConstantOfShape", {"four"}, "zeros");
  m.node("Concat", {"torch_pads", "zeros"}, "eight");
  one_int(*m.g->mutable_node(1), "axis", 0);
  m.init_ints("pairs", {-1, 2});
  m.node("Reshape", {"eight", "pairs"}, "by_axis");
  m.init_ints("start", {-1});
  m.init_ints("end", {std::numeric_limits<std::int64_t>::min() + 1});
  m.init_ints("axis0", {0});
  m.init_ints("back", {-1});
  m.node("Slice", {"by_axis", "start", "end", "axis0", "back"}, "reversed");
  m.node("Transpose", {"reversed"}, "ends_last");
  ints(*m.g->mutable_node(4), "perm", {1, 0});
  m.init_ints("flat", {-1});
  m.node("Reshape", {"ends_last", "flat"}, "pads64");
  one_int(m.node("Cast", {"pads64"}, "pads"), "to", onnx::TensorProto_DataType_INT64);
  m.node("Pad", {"input", "pads"}, "padded");
  ints(m.node("Conv", {"padded", "w"}, "output"), "strides", {2, 2});
  m.output("output");
  const Network net = onnx_network(m.bytes(), "torch_pad.onnx");
  CHECK(net.layers()[0].conv.pad_h == 0);
  CHECK(net.layers()[0].conv.pad_bottom() == 1);
  CHECK(net.layers()[0].conv.pad_right() == 1);

  OnnxGraph huge(13, {1, 3, 8, 8});
  huge.init_ints("shape", {4096, 4096});
  huge.node("ConstantOfShape", {"shape"}, "zeros");
  huge.output("zeros");
  CHECK(refusal(huge) == "m.onnx: node 'ConstantOfShape_0' (ConstantOfShape): would make over 1048576 values");
  OnnxGraph step0(13, {1, 3, 8, 8});
  step0.init_ints("data", {1, 2, 3});
  step0.init_ints("zero", {0});
  step0.node("Slice", {"data", "zero", "zero", "zero", "zero"}, "s");
  step0.output("s");
  CHECK(refusal(step0) == "m.onnx: node 'Slice_0' (Slice): has a step of 0");
  OnnxGraph wide(13, {1, 3, 8, 8});  // found by fuzz_onnx: 776 x 2^55 overflowed the product
  wide.init_ints("data", {1, 2, 3});
  wide.init_ints("shape", {776, std::int64_t{1} << 55});
  wide.node("Reshape", {"data", "shape"}, "r");
  wide.output("r");
  CHECK(refusal(wide) == "m.onnx: node 'Reshape_0' (Reshape): has a dimension of 36028797018963968");
}

TEST_CASE("onnx: Gemm without transB and MatMul + Add give the Gemm's linear layer; Clip(0, 6) is ReLU6") {
  const auto net_with = [](const std::string& tail) {
    OnnxGraph m(13, {-1, 2, 4, 4});
    m.init("w", {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
    onnx::NodeProto& conv = m.node("Conv", {"input", "w"}, "c");
    ints(conv, "kernel_shape", {1, 1});
    m.init("lo", {}, {0.0f});
    m.init("hi", {}, {6.0f});
    m.node("Clip", {"c", "lo", "hi"}, "r6");
    m.node("GlobalAveragePool", {"r6"}, "gap");
    m.node("Flatten", {"gap"}, "flat");
    m.init("wt", {3, 2}, {1, -1, 2, 0.5f, -1, 3});  // in x out: the transpose of Linear's layout
    m.init("bias", {2}, {0.5f, -0.5f});
    if (tail == "gemm") {
      m.node("Gemm", {"flat", "wt", "bias"}, "output");
    } else {
      m.node("MatMul", {"flat", "wt"}, "mm");
      m.node("Add", {"mm", "bias"}, "output");
    }
    m.output("output");
    return onnx_network(m.bytes(), tail + ".onnx");
  };
  const Network gemm = net_with("gemm"), matmul = net_with("matmul");
  // PyTorch's F.relu6 is a Relu then a Clip(0, 6); its F.avg_pool2d puts a Pad of nothing before the pool.
  OnnxGraph relu6(13, {-1, 2, 4, 4});
  relu6.init("w", {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
  ints(relu6.node("Conv", {"input", "w"}, "c"), "kernel_shape", {1, 1});
  relu6.node("Relu", {"c"}, "r");
  relu6.init("lo", {}, {0.0f});
  relu6.init("hi", {}, {6.0f});
  relu6.node("Clip", {"r", "lo", "hi"}, "r6");
  relu6.init_ints("nothing", {0, 0, 0, 0, 0, 0, 0, 0});
  relu6.node("Pad", {"r6", "nothing"}, "padded");
  onnx::NodeProto& avg = relu6.node("AveragePool", {"padded"}, "output");
  ints(avg, "kernel_shape", {2, 2});
  ints(avg, "strides", {2, 2});
  relu6.output("output");
  const Network fused = onnx_network(relu6.bytes(), "relu6.onnx");
  REQUIRE(fused.layers().size() == 2);
  CHECK(fused.layers()[0].epilogue.activation == Activation::relu6);
  CHECK(fused.layers()[1].kind == LayerKind::avg_pool);
  CHECK(gemm.layers()[0].epilogue.activation == Activation::relu6);
  REQUIRE(gemm.layers().back().kind == LayerKind::linear);
  CHECK(gemm.layers().back().weight == std::vector<float>{1, 2, -1, -1, 0.5f, 3});  // [out, in]
  CHECK(matmul.layers().back().weight == gemm.layers().back().weight);
  CHECK(matmul.layers().back().bias == std::vector<float>{0.5f, -0.5f});
  const std::vector<float> input = ramp(32, 1.0f);
  CHECK(forward(gemm, input) == forward(matmul, input));
}

TEST_CASE("onnx: Softmax over the classes becomes convlab's softmax; over another axis it is refused") {
  // A conv to 3 channels, a global pool (N x 3 x 1 x 1), then `tail`: the logits' softmax
  const auto graph = [](int opset, bool flatten, std::optional<std::int64_t> axis) {
    OnnxGraph m(opset, {-1, 2, 4, 4});
    m.init("w", {3, 2, 1, 1}, {1, 2, 3, 4, 5, 6});
    ints(m.node("Conv", {"input", "w"}, "c"), "kernel_shape", {1, 1});
    m.node("GlobalAveragePool", {"c"}, "gap");
    std::string logits = "gap";
    if (flatten) {
      m.init("wt", {3, 2}, {1, -1, 2, 0.5f, -1, 3});
      m.node("Flatten", {"gap"}, "flat");
      m.node("MatMul", {"flat", "wt"}, "mm");
      m.init("bias", {2}, {0.5f, -0.5f});
      m.node("Add", {"mm", "bias"}, logits = "logits");
    }
    onnx::NodeProto& s = m.node("Softmax", {logits}, "output");
    if (axis) one_int(s, "axis", *axis);
    m.output("output");
    return m;
  };
  for (const auto& [opset, flatten, axis] : {std::tuple{13, true, std::optional<std::int64_t>()},  // default -1, 2-D
                                             std::tuple{13, false, std::optional<std::int64_t>(1)},
                                             std::tuple{11, false, std::optional<std::int64_t>()},  // default 1
                                             std::tuple{13, true, std::optional<std::int64_t>(1)}}) {
    // Copies: clang 14 cannot capture structured bindings in CAPTURE's lambda (C++20 allows it).
    const int opset_version = opset;
    const bool flattened = flatten;
    CAPTURE(opset_version);
    CAPTURE(flattened);
    const Network net = onnx_network(graph(opset, flatten, axis).bytes(), "softmax.onnx");
    REQUIRE(net.layers().back().kind == LayerKind::softmax);
    CHECK(net.layers().back().name == "output");
    const std::vector<float> p = forward(net, ramp(32, 0.5f));
    REQUIRE(p.size() == (flatten ? 2u : 3u));
    double sum = 0;
    for (float v : p) sum += v;
    CHECK(sum == doctest::Approx(1.0));
    CHECK(p[0] != doctest::Approx(p[1]));
  }
  // opset 13's default axis, -1, on N x 3 x 1 x 1 is the width (1 wide): not the classes
  CHECK(refusal(graph(13, false, std::nullopt)) ==
        "m.onnx: node 'Softmax_2' (Softmax): is over axis -1 of a 3 x 1 x 1 value; convlab's softmax is over the classes "
        "of [batch, classes] (axis 1, or -1 after a Gemm, MatMul, Flatten or Reshape)");
  CHECK(refusal(graph(13, true, 0)).find("is over axis 0 of a [batch, features] value") != std::string::npos);
}

TEST_CASE("onnx: auto_pad SAME and a free batch; what convlab cannot run is refused in one line naming the node") {
  OnnxGraph same(17);
  same.init("w", {2, 3, 3, 3}, ramp(54, 0.1f));
  onnx::NodeProto& conv = same.node("Conv", {"input", "w"}, "output");
  conv.add_attribute()->set_name("auto_pad");
  conv.mutable_attribute(0)->set_type(onnx::AttributeProto_AttributeType_STRING);
  conv.mutable_attribute(0)->set_s("SAME_UPPER");
  same.output("output");
  // PyTorch's exporter hands shared initializers on through an Identity (torchvision's resnet18).
  same.node("Identity", {"w"}, "w_shared");
  same.g->mutable_node()->SwapElements(0, 1);
  same.g->mutable_node(1)->set_input(1, "w_shared");
  const Network net = onnx_network(same.bytes(), "same.onnx");
  CHECK(net.layers()[0].conv.pad_h == 1);
  CHECK(net.output_item() == nchw(1, 2, 8, 8));

  const auto changed = [](auto change) {
    OnnxGraph m = small_net();
    change(m);
    return refusal(m);
  };
  CHECK(refusal(OnnxGraph(9)) == "m.onnx: opset 9 is not supported (opsets 11 to 17: export with opset_version in that range)");
  CHECK(changed([](OnnxGraph& m) { m.g->mutable_node(6)->set_op_type("Sigmoid"); }).find(
            "m.onnx: node 'Gemm_6' (Sigmoid): is not supported (supported: Conv,") == 0);
  CHECK(changed([](OnnxGraph& m) { ints(*m.g->mutable_node(3), "pads", {0, 0, 1, 1}); }) ==
        "m.onnx: node 'MaxPool_3' (MaxPool): its padding differs between the sides (top 0, left 0, bottom 1, right 1): "
        "convlab's pools pad each axis evenly (its convolutions need not)");
  CHECK(changed([](OnnxGraph& m) { m.g->mutable_initializer(0)->set_name("lost"); }) ==
        "m.onnx: node 'Conv_0' (Conv): its weight 'w' is not an initializer or a Constant (convlab needs it fixed)");
  CHECK(changed([](OnnxGraph& m) {
          m.g->mutable_initializer(0)->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
        }).find("tensor 'w' keeps its data in an external file") != std::string::npos);
  CHECK(changed([](OnnxGraph& m) { m.g->mutable_initializer(0)->add_float_data(1); }) ==
        "m.onnx: tensor 'w' holds 109 values, its shape needs 108");
  CHECK(changed([](OnnxGraph& m) {
          m.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("C");
        }).find("input 'input': dimension 1 (C) is not a fixed size") != std::string::npos);
  CHECK(changed([](OnnxGraph& m) { m.g->mutable_node(3)->set_input(0, "later"); }) ==
        "m.onnx: node 'MaxPool_3' reads 'later', which no earlier node makes (the nodes must be in topological order)");
  CHECK(changed([](OnnxGraph& m) { one_int(*m.g->mutable_node(3), "ceil_mode", 1); }) ==
        "m.onnx: node 'MaxPool_3' (MaxPool): uses ceil_mode; convlab's pools round down (floor mode)");
  CHECK(changed([](OnnxGraph& m) {
          m.g->add_input()->set_name("second");
        }) == "m.onnx: the graph has 2 inputs; convlab runs networks of one input image tensor");
  // Found by fuzz_onnx: a node with no input, and dimensions whose product passes int64.
  CHECK(changed([](OnnxGraph& m) { m.g->mutable_node(2)->clear_input(); }) == "m.onnx: node 'Relu_2' (Relu): has no input");
  CHECK(changed([](OnnxGraph& m) {
          onnx::TensorProto* t = m.g->mutable_initializer(7);
          t->clear_dims();
          for (int i = 0; i < 3; ++i) t->add_dims(std::int64_t{1} << 31);
        }) == "m.onnx: tensor 'fc_b' has over 2^31 elements");
  const std::string bytes = small_net().bytes();
  CHECK_THROWS_WITH_AS(onnx_network(bytes.substr(0, bytes.size() / 2), "cut.onnx"),
                       "cut.onnx: not a valid ONNX model (the protobuf does not parse: truncated or not ONNX)", InputError);

  // Fusions convlab does not have: an activation or a BatchNorm after a pool, a Clip other than ReLU6.
  const auto after_pool = [](const std::string& op, std::vector<std::string> extra) {
    OnnxGraph m;
    ints(m.node("MaxPool", {"input"}, "p"), "kernel_shape", {2, 2});
    for (const std::string& e : extra) m.init(e, {3}, {1, 1, 1});
    std::vector<std::string> inputs{"p"};
    inputs.insert(inputs.end(), extra.begin(), extra.end());
    m.node(op, inputs, "output");
    m.output("output");
    return refusal(m);
  };
  OnnxGraph batched;  // a MatMul on N x C x H x W is a batched product, not a linear layer
  batched.init("m", {8, 2}, ramp(16, 1.0f));
  batched.node("MatMul", {"input", "m"}, "output");
  batched.output("output");
  CHECK(refusal(batched) == "m.onnx: node 'MatMul_0' (MatMul): multiplies a tensor that is not [batch, features]; convlab "
                            "runs Gemm and MatMul as linear layers (Flatten first)");
  CHECK(after_pool("Relu", {}) == "m.onnx: node 'Relu_1' (Relu): does not follow a Conv, Gemm or Add that feeds it alone "
                                  "(convlab fuses activations into those)");
  CHECK(after_pool("BatchNormalization", {"s", "b", "m", "v"}).find("does not follow a Conv that feeds it alone") !=
        std::string::npos);
  OnnxGraph clip = small_net();
  clip.g->mutable_node(2)->set_op_type("Clip");
  clip.init("zero", {}, {0.0f});
  clip.init("three", {}, {3.0f});
  clip.g->mutable_node(2)->add_input("zero");
  clip.g->mutable_node(2)->add_input("three");
  CHECK(refusal(clip) == "m.onnx: node 'Relu_2' (Clip): clips to [0, 3]; convlab runs Clip(0, 6) (ReLU6) and Clip(0) (ReLU)");
}

#else

TEST_CASE("onnx: a build without the ONNX schema says what to install") {
  CHECK_THROWS_WITH_AS(onnx_network("", "m.onnx"), doctest::Contains("built without ONNX import"), InputError);
}

#endif

TEST_CASE("cli: run and validate take a .onnx --model; one that cannot be read, or with --weights, exits 2") {
  test::check_usage_error("run --model /nonexistent/m.onnx --batch 1", "cannot read '/nonexistent/m.onnx'");
  const std::string junk = (test::scratch() / "junk.onnx").string();
  { std::ofstream(junk) << "not a protobuf at all"; }
#ifdef CONVLAB_WITH_ONNX
  test::check_usage_error("run --model " + junk + " --batch 1", "not a valid ONNX model");
  const std::string file = (test::scratch() / "small.onnx").string();
  { std::ofstream(file, std::ios::binary) << small_net().bytes(); }
  const test::Outcome o = test::run_convlab("run --model " + file + " --batch 1,2 --warmup 1 --trials 2 --threads 1 "
                                            "--kernel cpu.02_direct_xsimd --per-layer");
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("cpu.02_direct_xsimd") != std::string::npos);
  CHECK(o.out.find("conv1 ") != std::string::npos);  // --per-layer names the ONNX graph's outputs
  test::check_usage_error("run --model " + file + " --weights w.safetensors --batch 1",
                          "--weights: " + file + " is an ONNX model, which carries its own weights");
  test::check_usage_error("validate --model " + file + " --precision int8 --weights q --input i --expect e",
                          "--precision int8: an ONNX model is validated in FP32 only for now");
#else
  test::check_usage_error("run --model " + junk + " --batch 1", "built without ONNX import");
#endif
  test::check_usage_error("run --model lab-cnnn", "--model: unknown model 'lab-cnnn'");
}
