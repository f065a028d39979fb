// What NetworkPlan (host) and GpuNetworkPlan (device) share: the one walk over a network's layers.
// It resolves each layer's operands (its input and that input's shape at the plan's batch, an
// add's second input, its output buffer), runs the layer through the plan, and times it when
// asked, so that both executors are driven and timed the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/common/tensor.hpp"

namespace convlab {

class Network;

class LayerWalk {
 public:
  virtual ~LayerWalk() = default;

  // One forward pass: every layer, in order.
  void forward();
  // The same pass with each layer timed by steady_clock (ms into layer_ms, one per layer), the
  // plan synchronized before the first layer and after each, so a layer's time is its own. A
  // separate entry point so that the plain forward() pays nothing for it.
  void forward_timed(std::span<double> layer_ms);
  // Layer `layer` alone, on what its input buffers hold now: `convlab validate` puts the
  // reference's own inputs there, so that a layer's error is its own, not its predecessors'.
  void forward_layer(std::size_t layer);

  std::int64_t batch() const { return batch_; }

 protected:
  // Throws InputError when batch < 1.
  LayerWalk(const Network& net, std::int64_t batch);

  // A layer's operands, as the walk resolves them from the network.
  struct Operands {
    const float* in;      // its first input
    Shape in_shape;       // that input's shape at the plan's batch
    const float* second;  // its second input (an add's), else null
    float* out;           // its output (null where the plan never stores it)
  };
  virtual void run_layer(std::size_t layer, const Operands& x) = 0;
  // Where layer `index`'s output lives, or the network input's for Network::kNetworkInput.
  virtual float* buffer(int index) = 0;
  // Waits for the work submitted so far (a GPU's stream); host layers are done when they return.
  virtual void synchronize() {}

  Shape batched(Shape item) const;  // a batch item's shape at the plan's batch

  const Network& net_;
  const std::int64_t batch_;

};

}  // namespace convlab
