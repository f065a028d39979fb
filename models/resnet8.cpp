// resnet8: the smallest CIFAR ResNet, torchvision BasicBlock naming, 3x32x32.
//   conv1 3->16 3x3 pad 1, bn1, ReLU                       -> 16x32x32
//   layer1.0 16->16 s1, layer2.0 16->32 s2, layer3.0 32->64 s2  -> 64x8x8
//   global average pool (avgpool), fc 64->10
// Each block: conv1 3x3 stride s + bn1 + ReLU, conv2 3x3 + bn2, plus the shortcut (identity, or
// downsample.0 1x1 stride s + downsample.1 BN where the shape changes), then ReLU. BatchNorm is
// folded into each conv; the block's add is the layer named after the block, as its module is.
#include "models/catalog.hpp"

namespace convlab {

namespace {
int basic_block(Network& net, const std::string& name, int input, std::int64_t in_channels,
                std::int64_t out_channels, std::int64_t stride) {
  int x = net.conv_bn(name + ".conv1", name + ".bn1", input, out_channels, 3, stride, 1, 1, Activation::relu);
  x = net.conv_bn(name + ".conv2", name + ".bn2", x, out_channels, 3, 1, 1, 1, Activation::none);
  int shortcut = input;
  if (stride != 1 || in_channels != out_channels)
    shortcut = net.conv_bn(name + ".downsample.0", name + ".downsample.1", input, out_channels, 1, stride, 0, 1,
                           Activation::none);
  return net.add(name, x, shortcut, /*relu=*/true);
}
}  // namespace

Network build_resnet8(WeightSource weights) {
  Network net("resnet8", nchw(1, 3, 32, 32), std::move(weights));
  int x = net.conv_bn("conv1", "bn1", Network::kNetworkInput, 16, 3, 1, 1, 1, Activation::relu);
  x = basic_block(net, "layer1.0", x, 16, 16, 1);
  x = basic_block(net, "layer2.0", x, 16, 32, 2);
  x = basic_block(net, "layer3.0", x, 32, 64, 2);
  x = net.global_avg_pool("avgpool", x);
  net.linear("fc", x, 10, /*relu=*/false);
  return net;
}

}  // namespace convlab
