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

TEST_CASE("models: resnet18 and mobilenet-v2 ask for torchvision's state_dict, name for name") {
  // torchvision's resnet18() / mobilenet_v2() state_dicts hold 122 / 314 tensors, of which 20 / 52
  // are BatchNorm's num_batches_tracked (inference ignores it); their parameter counts,
  // 11689512 / 3504872, hold BatchNorm's weight and bias, which fold into one bias per channel:
  // 4800 / 17056 fewer here.
  struct Expected { const char* model; std::size_t names; std::int64_t parameters; std::vector<const char*> some; };
  const Expected expected[] = {
      {"resnet18", 102, 11689512 - 4800,
       {"conv1.weight", "bn1.running_var", "layer1.1.bn2.weight", "layer2.0.downsample.0.weight",
        "layer4.1.conv2.weight", "layer4.0.downsample.1.running_mean", "fc.weight", "fc.bias"}},
      {"mobilenet-v2", 262, 3504872 - 17056,
       {"features.0.0.weight", "features.0.1.running_mean", "features.1.conv.0.0.weight", "features.1.conv.1.weight",
        "features.1.conv.2.running_var", "features.2.conv.0.0.weight", "features.2.conv.3.bias",
        "features.17.conv.1.0.weight", "features.18.0.weight", "features.18.1.bias", "classifier.1.weight"}},
  };
  for (const Expected& e : expected) {
    CAPTURE(e.model);
    const std::vector<std::string> names = names_asked(*find_model(e.model));
    const std::set<std::string> set(names.begin(), names.end());
    CHECK(names.size() == e.names);
    CHECK(set.size() == e.names);
    for (const char* n : e.some) CHECK_MESSAGE(set.contains(n), n);
    const Network net = find_model(e.model)->build(seeded_weights(1));
    CHECK(net.parameter_count() == e.parameters);
    CHECK(net.input_item() == nchw(1, 3, 224, 224));
    CHECK(net.output_item() == nchw(1, 1000, 1, 1));
  }
  const Network resnet = build_resnet18(seeded_weights(1));
  CHECK(layer(resnet, "maxpool").out_item == nchw(1, 64, 56, 56));
  CHECK(layer(resnet, "layer4.1").out_item == nchw(1, 512, 7, 7));
  const Network mobilenet = build_mobilenet_v2(seeded_weights(1));
  CHECK(layer(mobilenet, "features.3").kind == LayerKind::add);        // 24 -> 24, stride 1: residual
  CHECK(layer(mobilenet, "features.4.conv.2").kind == LayerKind::conv);  // 24 -> 32: none
  CHECK(layer(mobilenet, "features.4.conv.1.0").conv.is_depthwise());
  CHECK(layer(mobilenet, "features.17.conv.2").out_item == nchw(1, 320, 7, 7));
}

TEST_CASE("models: every network runs, with live activations, under seeded weights") {
  for (const ModelInfo& m : all_models()) {
    CAPTURE(m.name);
    const Network net = m.build(seeded_weights(4));
    // the reference kernel's loops would take long on 2 GFLOP per item; any kernel shows liveness
    NetworkPlan plan(net, 2, {.default_kernel = m.imagenet_size ? "cpu.01_im2col_eigen" : "cpu.00_reference"});
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
