#include "bench/check/oracle.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/check/tolerance.hpp"
#include "bench/check/validate.hpp"

namespace convlab {

std::string differs_from_reference(const Network& net, NetworkPlan& plan, double error_scale) {
  plan.forward();
  return differs_from_reference(
      net, plan.batch(), plan.input().span(),
      [&plan](std::size_t i) -> std::optional<std::span<const float>> { return plan.activation(static_cast<int>(i)).span(); },
      error_scale);
}

std::string differs_from_reference(const Network& net, std::int64_t batch, std::span<const float> input,
                                   const std::function<std::optional<std::span<const float>>(std::size_t)>& got,
                                   double error_scale) {
  NetworkPlan reference(net, batch, KernelSelection{.default_kernel = "cpu.00_reference"});
  std::ranges::copy(input, reference.input().span().begin());
  reference.forward();
  const Tolerance tolerance = tolerance_for(error_scale);
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const std::optional<std::span<const float>> layer = got(i);
    if (!layer) continue;  // not stored: checked through the layer that consumed it
    const std::span<const float> out = *layer, want = reference.activation(static_cast<int>(i)).span();
    const LayerComparison c = compare_layer(net.layers()[i].name, out, want, tolerance);
    if (c.pass) continue;
    if (std::any_of(out.begin(), out.end(), [](float v) { return !std::isfinite(v); }))
      return fmt::format("INVALID: layer {} outputs NaN or Inf{}", c.layer,
                         std::all_of(want.begin(), want.end(), [](float v) { return std::isfinite(v); })
                             ? " (the oracle's are finite: the kernel is at fault)"
                             : " (so do the oracle's: the input or the weights are)");
    return fmt::format("INVALID: layer {} differs from cpu.00_reference: normalised error {:.2g} (tolerance {:.2g}), "
                       "max abs {:.2g} (tolerance {:.2g})",
                       c.layer, c.normalised, tolerance.normalised, c.max_abs, tolerance.peak_fraction * c.peak);
  }
  return {};
}

}  // namespace convlab
