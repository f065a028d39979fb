// benchdnn's MISTRUSTED idea: a kernel can match the oracle and still prove nothing, when both
// compute a constant (all-zero, say) from an input that is not: dead ReLUs, zeroed weights, a
// broken weights file. Such a result is kept but flagged `mistrusted`, with the reason.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>

#include "models/network.hpp"

namespace convlab {

// True when every value equals the first (bitwise equal floats; NaN is never constant). An empty
// span is not constant: there is nothing to distrust.
bool is_constant(std::span<const float> values);

// "" or the first layer whose output (in `plan`, as its last forward left it) is constant although
// its first input is not, e.g. "layer conv2 outputs the constant 0 for a varying input".
std::string mistrusted_reason(const Network& net, const NetworkPlan& plan);
// The same for any executor: `output(i)` is layer i's output, or nothing where the executor does
// not store it (a conv fused into the layer after it); such layers are skipped.
std::string mistrusted_reason(const Network& net, std::span<const float> input,
                              const std::function<std::optional<std::span<const float>>(std::size_t)>& output);

}  // namespace convlab
