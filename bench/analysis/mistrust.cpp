#include "bench/analysis/mistrust.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace convlab {

bool is_constant(std::span<const float> values) {
  return !values.empty() && std::all_of(values.begin(), values.end(), [&](float v) { return v == values.front(); });
}

std::string mistrusted_reason(const Network& net, const NetworkPlan& plan) {
  return mistrusted_reason(net, plan.input().span(), [&plan](std::size_t i) -> std::optional<std::span<const float>> {
    return plan.activation(static_cast<int>(i)).span();
  });
}

std::string mistrusted_reason(const Network& net, std::span<const float> network_input,
                              const std::function<std::optional<std::span<const float>>(std::size_t)>& output_of) {
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const Layer& layer = net.layers()[i];
    const int from = layer.inputs.empty() ? Network::kNetworkInput : layer.inputs.front();
    const auto input = from == Network::kNetworkInput ? std::optional(network_input) : output_of(static_cast<std::size_t>(from));
    const auto output = output_of(i);
    if (!input || !output) continue;
    // A constant input may rightly give a constant output; only a varying one makes it suspect.
    if (is_constant(*output) && !is_constant(*input))
      return fmt::format("layer {} outputs the constant {} for a varying input", layer.name, output->front());
  }
  return {};
}

}  // namespace convlab
