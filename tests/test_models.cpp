// The reference networks: layer shapes, the state_dict names each asks for, parameters and FLOPs.
#include <doctest/doctest.h>

#include <set>

#include "models/catalog.hpp"

using namespace convlab;

namespace {
// Every state_dict name a builder asks for, in order.
std::vector<std::string> names_asked(const ModelInfo& model) {
  std::vector<std::string> names;
  const WeightSource seeded = seeded_weights(1);
  model.build([&](const std::string& name, const std::vector<std::int64_t>& shape, std::int64_t fan_in) {
    names.push_back(name);
    return seeded(name, shape, fan_in);
  });
  return names;
}

const Layer& layer(const Network& net, const std::string& name) {
  for (const Layer& l : net.layers())
    if (l.name == name) return l;
  FAIL("no layer " << name);
  return net.layers().front();
}
}  // namespace

TEST_CASE("models: lenet5 has LeNet's shapes and PyTorch's names") {
  const Network net = build_lenet5(seeded_weights(1));
  CHECK(net.input_item() == nchw(1, 1, 28, 28));
  CHECK(layer(net, "conv1").out_item == nchw(1, 6, 28, 28));
  CHECK(layer(net, "pool2").out_item == nchw(1, 16, 5, 5));
  CHECK(layer(net, "fc1").weight.size() == 120 * 400);  // flatten 400, implicit
  CHECK(net.output_item() == nchw(1, 10, 1, 1));
  CHECK(net.parameter_count() == 156 + 2416 + 48120 + 10164 + 850);
  CHECK(names_asked(*find_model("lenet5")) ==
        std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias",
                                 "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"});
}

TEST_CASE("models: resnet8 follows torchvision's BasicBlock, with BatchNorm folded") {
  const Network net = build_resnet8(seeded_weights(1));
  CHECK(layer(net, "layer1.0").kind == LayerKind::add);
  CHECK(layer(net, "layer1.0").inputs[1] == 0);  // identity shortcut from conv1
  CHECK(layer(net, "layer2.0.downsample.0").conv.r == 1);
  CHECK(layer(net, "layer2.0.downsample.0").conv.stride_h == 2);
  CHECK(layer(net, "layer3.0").out_item == nchw(1, 64, 8, 8));
  CHECK(layer(net, "layer2.0.conv2").epilogue.activation == Activation::none);  // ReLU comes after the add
  CHECK(layer(net, "layer2.0.conv1").bias.size() == 32);                       // BN folded into a bias
  const std::vector<std::string> names = names_asked(*find_model("resnet8"));
  const std::set<std::string> set(names.begin(), names.end());
  CHECK(names.size() == set.size());
  for (const char* n : {"conv1.weight", "bn1.running_var", "layer1.0.bn2.running_mean", "layer2.0.downsample.0.weight",
                        "layer2.0.downsample.1.running_var", "layer3.0.downsample.1.bias", "fc.weight", "fc.bias"})
    CHECK_MESSAGE(set.contains(n), n);
  CHECK_FALSE(set.contains("layer1.0.downsample.0.weight"));
  CHECK_FALSE(set.contains("conv1.bias"));
  // conv 432 + block1 2*2304 + block2 4608+9216+512 + block3 18432+36864+2048 + fc 650, plus one
  // folded bias per BN'd conv (16 + 32 + 96 + 192)
  CHECK(net.parameter_count() == 432 + 4608 + 14336 + 57344 + 650 + 16 + 32 + 96 + 192);
}

TEST_CASE("models: mobilenet-tiny has depthwise-separable blocks with ReLU6") {
  const Network net = build_mobilenet_tiny(seeded_weights(1));
  const Layer& dw = layer(net, "features.2.dw");
  CHECK(dw.conv.is_depthwise());
  CHECK(dw.conv.stride_h == 2);
  CHECK(dw.epilogue.activation == Activation::relu6);
  CHECK(layer(net, "features.5.pw").out_item == nchw(1, 128, 8, 8));
  CHECK(net.output_item() == nchw(1, 10, 1, 1));
  const std::vector<std::string> names = names_asked(*find_model("mobilenet-tiny"));
  const std::set<std::string> set(names.begin(), names.end());
  for (const char* n : {"features.0.0.weight", "features.0.1.running_mean", "features.3.pw_bn.running_var",
                        "features.5.dw.weight", "classifier.weight"})
    CHECK_MESSAGE(set.contains(n), n);
}

TEST_CASE("models: every network runs, with live activations, under seeded weights") {
  for (const ModelInfo& m : all_models()) {
    CAPTURE(m.name);
    const Network net = m.build(seeded_weights(4));
    NetworkPlan plan(net, 2, {});
    fill_uniform(plan.input().span(), 4, 0);
    plan.forward();
    // He-normal weights keep the logits alive: they differ between items and are not tiny
    const auto out = plan.output().span();
    double peak = 0;
    for (float v : out) peak = std::max(peak, double(std::abs(v)));
    CHECK(peak > 0.1);
    CHECK(out[0] != out[10]);
  }
}
