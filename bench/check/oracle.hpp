// Judging an executor's outputs against the oracle, cpu.00_reference, run on the same input: the
// check every measured result passes before its timings count (`run`, `conv` and the GPU benches).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "models/network.hpp"

namespace convlab {

// Runs `plan` once more on its input and the oracle on the same input; empty when every layer
// output matches within the tolerance of a kernel with `error_scale` (bench/check/tolerance.hpp),
// otherwise the first layer that differs and by how much, or that its values are not finite.
// (It runs the forward itself: what ran last, e.g. layout-change timing, may have left the
// activation buffers holding anything.)
std::string differs_from_reference(const Network& net, NetworkPlan& plan, double error_scale);
// The same judgement for any executor: `got(i)` is layer i's output on the host, or nothing for a
// layer it does not store (a conv fused into the layer after it); `input` what it ran on.
std::string differs_from_reference(const Network& net, std::int64_t batch, std::span<const float> input,
                                   const std::function<std::optional<std::span<const float>>(std::size_t)>& got,
                                   double error_scale);

}  // namespace convlab
