// mobilenet-tiny: MobileNet v1's depthwise-separable blocks at CIFAR size, 3x32x32.
//   features.0: conv 3->16 3x3 pad 1 (features.0.0) + BN (features.0.1) + ReLU6
//   features.1..5: dw 3x3 depthwise (groups = channels, stride s, pad 1) + dw_bn + ReLU6,
//                  pw 1x1 + pw_bn + ReLU6; 16->32 s1, 32->64 s2, 64->64 s1, 64->128 s2, 128->128 s1
//   global average pool (avgpool), classifier 128->10
// Depthwise convs have one input channel per group: almost no arithmetic per byte, the case that
// exposes kernels tuned only for dense convolutions.
#include "models/catalog.hpp"

namespace convlab {

Network build_mobilenet_tiny(WeightSource weights) {
  Network net("mobilenet-tiny", nchw(1, 3, 32, 32), std::move(weights));
  int x = net.conv_bn("features.0.0", "features.0.1", Network::kNetworkInput, 16, 3, 1, 1, 1, Activation::relu6);
  struct Block { std::int64_t out, stride; };
  const Block blocks[] = {{32, 1}, {64, 2}, {64, 1}, {128, 2}, {128, 1}};
  std::int64_t channels = 16;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "features." + std::to_string(i + 1);
    x = net.conv_bn(name + ".dw", name + ".dw_bn", x, channels, 3, blocks[i].stride, 1, /*groups=*/channels,
                    Activation::relu6);
    x = net.conv_bn(name + ".pw", name + ".pw_bn", x, blocks[i].out, 1, 1, 0, 1, Activation::relu6);
    channels = blocks[i].out;
  }
  x = net.global_avg_pool("avgpool", x);
  net.linear("classifier", x, 10, /*relu=*/false);
  return net;
}

}  // namespace convlab
