#include "models/layer_walk.hpp"

#include <chrono>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "models/network.hpp"

namespace convlab {

LayerWalk::LayerWalk(const Network& net, std::int64_t batch) : net_(net), batch_(batch) {
  if (batch < 1) throw InputError(fmt::format("batch {} is not a positive integer", batch));
}

Shape LayerWalk::batched(Shape item) const {
  item.dims[0] = batch_;
  return item;
}

void LayerWalk::forward_layer(std::size_t layer) {
  const Layer& l = net_.layers()[layer];
  const int first = l.inputs[0];
  const Shape in_item = first == Network::kNetworkInput ? net_.input_item() : net_.layers()[static_cast<std::size_t>(first)].out_item;
  run_layer(layer, Operands{.in = buffer(first), .in_shape = batched(in_item),
                            .second = l.inputs.size() > 1 ? buffer(l.inputs[1]) : nullptr,
                            .out = buffer(static_cast<int>(layer))});
}

void LayerWalk::forward() {
  for (std::size_t i = 0; i < net_.layers().size(); ++i) forward_layer(i);
}

void LayerWalk::forward_timed(std::span<double> layer_ms) {
  if (layer_ms.size() != net_.layers().size())
    throw InputError(fmt::format("forward_timed: {} slots for {} layers", layer_ms.size(), net_.layers().size()));
  using Clock = std::chrono::steady_clock;
  synchronize();
  for (std::size_t i = 0; i < net_.layers().size(); ++i) {
    const Clock::time_point start = Clock::now();
    forward_layer(i);
    synchronize();
    layer_ms[i] = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
}

}  // namespace convlab
