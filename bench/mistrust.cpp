#include "bench/mistrust.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace convlab {

bool is_constant(std::span<const float> values) {
  return !values.empty() && std::all_of(values.begin(), values.end(), [&](float v) { return v == values.front(); });
}

std::string mistrusted_reason(const Network& net, const NetworkPlan& plan) {
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const Layer& layer = net.layers()[i];
    const int from = layer.inputs.empty() ? Network::kNetworkInput : layer.inputs.front();
    const Tensor& input = from == Network::kNetworkInput ? plan.input() : plan.activation(from);
    const auto output = plan.activation(static_cast<int>(i)).span();
    // A constant input may rightly give a constant output; only a varying one makes it suspect.
    if (is_constant(output) && !is_constant(input.span()))
      return fmt::format("layer {} outputs the constant {} for a varying input", layer.name, output.front());
  }
  return {};
}

}  // namespace convlab
