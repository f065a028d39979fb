// lenet5: LeCun's digit classifier in its modern form (ReLU, max-pool), 1x28x28 (MNIST-sized).
//   conv1 1->6 5x5 pad 2 + ReLU, maxpool 2   -> 6x14x14
//   conv2 6->16 5x5 + ReLU, maxpool 2        -> 16x5x5
//   flatten 400 (implicit: NCHW is contiguous in PyTorch's flatten order)
//   fc1 400->120 + ReLU, fc2 120->84 + ReLU, fc3 84->10
// Its 5x5 kernels and tiny channel counts are the opposite corner from lab-cnn's 3x3 layers.
#include "models/catalog.hpp"

namespace convlab {

Network build_lenet5(WeightSource weights) {
  Network net("lenet5", nchw(1, 1, 28, 28), std::move(weights));
  int x = net.conv("conv1", Network::kNetworkInput, 6, 5, 1, 2, 1, /*bias=*/true, Activation::relu);
  x = net.max_pool("pool1", x, {.kernel = 2, .stride = 2});
  x = net.conv("conv2", x, 16, 5, 1, 0, 1, true, Activation::relu);
  x = net.max_pool("pool2", x, {.kernel = 2, .stride = 2});
  x = net.linear("fc1", x, 120, /*relu=*/true);
  x = net.linear("fc2", x, 84, true);
  net.linear("fc3", x, 10, false);
  return net;
}

}  // namespace convlab
