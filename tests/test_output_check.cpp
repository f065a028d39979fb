// Results that cannot lie: a kernel's outputs are compared with the oracle's before its timings
// are reported. Exercised here with plans whose outputs really differ.
#include <doctest/doctest.h>

#include <limits>

#include "bench/check/oracle.hpp"
#include "bench/harness/model_bench.hpp"
#include "models/catalog.hpp"

using namespace convlab;

TEST_CASE("output check: a correct kernel passes, every listed CPU kernel included") {
  const Network net = build_lab_cnn(seeded_weights(1));
  for (const std::string& id : kernels_for_model("lab-cnn", Backend::cpu)) {
    CAPTURE(id);
    NetworkPlan plan(net, 2, {.default_kernel = id});
    fill_uniform(plan.input().span(), 9, 0);
    CHECK(differs_from_reference(net, plan, find_kernel(id)->error_scale).empty());
  }
}

TEST_CASE("output check: other weights are caught at the first layer, with the numbers") {
  const Network right = build_lab_cnn(seeded_weights(1)), wrong = build_lab_cnn(seeded_weights(2));
  NetworkPlan plan(wrong, 1, {});
  fill_uniform(plan.input().span(), 9, 0);
  const std::string why = differs_from_reference(right, plan, 1.0);
  CHECK(why.rfind("INVALID: layer conv1 differs from cpu.00_reference: normalised error", 0) == 0);
}

TEST_CASE("output check: NaN is reported as such, and blamed on the weights when the oracle sees it too") {
  // NaN in the classifier's weights: fc has no activation that could hide it (our ReLU maps NaN
  // to 0, where PyTorch's propagates it).
  const WeightSource seeded = seeded_weights(1);
  const Network net = build_lab_cnn([&](const std::string& name, const std::vector<std::int64_t>& shape, std::int64_t fan_in) {
    auto values = seeded(name, shape, fan_in);
    if (name == "fc.weight") values[3] = std::numeric_limits<float>::quiet_NaN();
    return values;
  });
  NetworkPlan plan(net, 1, {});
  fill_uniform(plan.input().span(), 9, 0);
  CHECK(differs_from_reference(net, plan, 1.0) ==
        "INVALID: layer fc outputs NaN or Inf (so do the oracle's: the input or the weights are)");
}
