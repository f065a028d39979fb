// mobilenet-v2: torchvision's mobilenet_v2() (width 1.0) and its state_dict names, 3x224x224.
//   features.0: conv 3->32 3x3 stride 2 pad 1 (features.0.0) + BN (features.0.1) + ReLU6
//   features.1..17: inverted residual blocks (expansion t, output c, n blocks, first stride s):
//     (1, 16, 1, 1) (6, 24, 2, 2) (6, 32, 3, 2) (6, 64, 4, 2) (6, 96, 3, 1) (6, 160, 3, 2) (6, 320, 1, 1)
//     each: [pw 1x1 expand to t x in + BN + ReLU6, when t > 1], dw 3x3 (groups = channels, stride)
//     + BN + ReLU6, pw 1x1 project to c + BN, no activation (the "linear bottleneck"); plus the
//     input when the shape is unchanged (stride 1, in = c), as a residual add named after the block
//   features.18: conv 1x1 320->1280 + BN + ReLU6
//   global average pool (avgpool), classifier.1 1280->1000 (classifier.0 is a Dropout: identity)
// torchvision numbers a block's modules in order: with expansion conv.0 (conv.0.0, conv.0.1 its BN),
// conv.1 (dw), conv.2 (the projection) and conv.3 (its BN); without, the dw is conv.0.
#include "models/catalog.hpp"

namespace convlab {

namespace {
int inverted_residual(Network& net, const std::string& name, int input, std::int64_t in, std::int64_t out,
                      std::int64_t stride, std::int64_t expansion) {
  const std::int64_t hidden = in * expansion;
  int x = input, module = 0;
  const auto part = [&](int i) { return name + ".conv." + std::to_string(i); };
  if (expansion != 1) {
    x = net.conv_bn(part(module) + ".0", part(module) + ".1", x, hidden, 1, 1, 0, 1, Activation::relu6);
    ++module;
  }
  x = net.conv_bn(part(module) + ".0", part(module) + ".1", x, hidden, 3, stride, 1, hidden, Activation::relu6);
  x = net.conv_bn(part(module + 1), part(module + 2), x, out, 1, 1, 0, 1, Activation::none);
  return stride == 1 && in == out ? net.add(name, x, input, /*relu=*/false) : x;
}
}  // namespace

Network build_mobilenet_v2(WeightSource weights) {
  Network net("mobilenet-v2", nchw(1, 3, 224, 224), std::move(weights));
  int x = net.conv_bn("features.0.0", "features.0.1", Network::kNetworkInput, 32, 3, 2, 1, 1, Activation::relu6);
  struct Stage { std::int64_t expansion, out, blocks, stride; };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  std::int64_t channels = 32;
  int index = 1;
  for (const Stage& s : stages)
    for (std::int64_t b = 0; b < s.blocks; ++b, ++index) {
      x = inverted_residual(net, "features." + std::to_string(index), x, channels, s.out, b == 0 ? s.stride : 1,
                            s.expansion);
      channels = s.out;
    }
  x = net.conv_bn("features.18.0", "features.18.1", x, 1280, 1, 1, 0, 1, Activation::relu6);
  x = net.global_avg_pool("avgpool", x);
  net.linear("classifier.1", x, 1000, /*relu=*/false);
  return net;
}

}  // namespace convlab
