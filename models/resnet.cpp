// The ResNets: torchvision's BasicBlock and its state_dict names, at two sizes.
// resnet8, the smallest CIFAR ResNet, 3x32x32:
//   conv1 3->16 3x3 pad 1, bn1, ReLU                       -> 16x32x32
//   layer1.0 16->16 s1, layer2.0 16->32 s2, layer3.0 32->64 s2  -> 64x8x8
//   global average pool (avgpool), fc 64->10
// resnet18, torchvision's resnet18() at ImageNet size, 3x224x224:
//   conv1 3->64 7x7 stride 2 pad 3, bn1, ReLU, maxpool 3x3 stride 2 pad 1   -> 64x56x56
//   layer1..layer4: two BasicBlocks each, 64, 128 s2, 256 s2, 512 s2        -> 512x7x7
//   global average pool (avgpool), fc 512->1000
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

Network build_resnet18(WeightSource weights) {
  Network net("resnet18", nchw(1, 3, 224, 224), std::move(weights));
  int x = net.conv_bn("conv1", "bn1", Network::kNetworkInput, 64, 7, 2, 3, 1, Activation::relu);
  x = net.max_pool("maxpool", x, {.kernel = 3, .stride = 2, .pad = 1});
  std::int64_t channels = 64;
  for (int stage = 1; stage <= 4; ++stage) {
    const std::int64_t out = 64 << (stage - 1);
    for (int block = 0; block < 2; ++block) {
      x = basic_block(net, "layer" + std::to_string(stage) + "." + std::to_string(block), x, channels, out,
                      stage > 1 && block == 0 ? 2 : 1);
      channels = out;
    }
  }
  x = net.global_avg_pool("avgpool", x);
  net.linear("fc", x, 1000, /*relu=*/false);
  return net;
}

}  // namespace convlab
