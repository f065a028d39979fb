// lab-cnn: the default teaching network. Small enough that batch 1 is dominated by per-layer
// overheads and batch 32 by arithmetic, which is the point of the batch 1 versus batch 32 lab.
//   input 3x32x32
//   conv1 3->16 3x3 pad 1 + ReLU, maxpool 2    -> 16x16x16
//   conv2 16->32 3x3 pad 1 + ReLU, maxpool 2   -> 32x8x8
//   conv3 32->64 3x3 pad 1 + ReLU              -> 64x8x8
//   global average pool, fc 64->10             -> 10 logits
// Layer names are the PyTorch module names, so a state_dict of the same module loads unchanged.
#include "models/catalog.hpp"

namespace convlab {

Network build_lab_cnn(WeightSource weights) {
  Network net("lab-cnn", nchw(1, 3, 32, 32), std::move(weights));
  int x = net.conv("conv1", Network::kNetworkInput, 16, 3, 1, 1, 1, /*bias=*/true, Activation::relu);
  x = net.max_pool("pool1", x, {.kernel = 2, .stride = 2});
  x = net.conv("conv2", x, 32, 3, 1, 1, 1, true, Activation::relu);
  x = net.max_pool("pool2", x, {.kernel = 2, .stride = 2});
  x = net.conv("conv3", x, 64, 3, 1, 1, 1, true, Activation::relu);
  x = net.global_avg_pool("gap", x);
  net.linear("fc", x, 10, /*relu=*/false);
  return net;
}

}  // namespace convlab
