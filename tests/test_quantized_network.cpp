// Int8 networks (models/quantized_network.hpp): PyTorch's observers and weight quantisation, every
// network run in int8 with each int8 kernel giving the oracle's bytes, and the prediction change
// against FP32 measured (bench/check/quantization_effect.hpp).
#include <doctest/doctest.h>

#include <cmath>

#include "bench/check/quantization_effect.hpp"
#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/quantized_network.hpp"

using namespace convlab;

TEST_CASE("quantize: the min/max observer's parameters and per-channel symmetric weights, as PyTorch makes them") {
  const QuantParams wide = observed_quant_params(-1.0f, 3.0f);
  CHECK(wide.scale == doctest::Approx(4.0 / 255));
  CHECK(wide.zero_point == 64);  // 63.75 rounded
  const QuantParams relu = observed_quant_params(0.5f, 6.0f);  // widened to include 0
  CHECK(relu.scale == doctest::Approx(6.0 / 255));
  CHECK(relu.zero_point == 0);
  const QuantParams negative = observed_quant_params(-2.0f, -1.0f);
  CHECK(negative.zero_point == 255);
  const QuantParams zero = observed_quant_params(0.0f, 0.0f);  // a dead activation: no division by 0
  CHECK(zero.scale > 0);
  CHECK(zero.zero_point == 0);

  const std::vector<float> weight{0.5f, -1.0f, 0.25f, 0.0f, 2.0f, -0.5f};
  const QuantizedWeights q = quantize_weights(weight, std::vector<float>{0.1f, 0.2f}, 2);
  REQUIRE(q.weight_scale.size() == 2);
  CHECK(q.weight_scale[0] == doctest::Approx(1.0 / 127.5));
  CHECK(q.weight_scale[1] == doctest::Approx(2.0 / 127.5));
  // PyTorch 1.13's torch.quantize_per_channel gives the same: in float, -1 / (1 / 127.5) is
  // -127.49999 (-> -127) and 2 / (2 / 127.5) is 127.49999 (-> 127), the others round as expected.
  CHECK(q.weight == std::vector<std::int8_t>{64, -127, 32, 0, 127, -32});
  CHECK(q.bias == std::vector<float>{0.1f, 0.2f});
}

TEST_CASE("int8 networks: each runs end to end, every int8 kernel giving the oracle's bytes, close to FP32") {
  for (const ModelInfo& model : all_models()) {
    CAPTURE(model.name);
    const Network net = model.build(seeded_weights(3));
    const QuantizedNetwork q(net, seeded_inputs(net, 16, 5, 1000), "min/max calibration on 16 seeded inputs");
    CHECK(q.parameter_bytes() < static_cast<std::size_t>(net.parameter_count()) * sizeof(float) / 3);
    const std::vector<float> inputs = seeded_inputs(net, 3, 5, 2000);  // not the calibration set
    Int8NetworkPlan oracle(q, 3, "cpu.20_int8_reference");
    std::ranges::copy(inputs, oracle.input().data());
    oracle.forward();
    for (const Int8KernelInfo& k : all_int8_kernels()) {
      if (k.baseline || k.backend != Backend::cpu) continue;  // int8 networks run on the CPU
      CAPTURE(k.id);
      Int8NetworkPlan plan(q, 3, std::string(k.id));
      std::ranges::copy(inputs, plan.input().data());
      plan.forward();
      for (std::size_t i = 0; i < net.layers().size(); ++i) CHECK(plan.dequantized(static_cast<int>(i)) == oracle.dequantized(static_cast<int>(i)));
    }
    const QuantizationEffect e = measure_quantization_effect(q, seeded_inputs(net, 32, 5, 2000), "cpu.21_int8_direct_madd");
    CHECK(e.inputs == 32);
    CHECK(e.int8_parameter_bytes == q.parameter_bytes());
    MESSAGE(describe(e));
    CHECK(e.logits_normalised_error < 0.5);  // int8 computes nearly the same function
    for (const auto& l : e.layers) CHECK(l.db > 10);
  }
  CHECK_THROWS_AS(Int8NetworkPlan(QuantizedNetwork(model_or_throw("lenet5").build(seeded_weights(1)),
                                                   std::vector<float>(5), "bad"), 1, "cpu.21_int8_direct_madd"),
                  InputError);
  const Network lenet = model_or_throw("lenet5").build(seeded_weights(1));
  const QuantizedNetwork q(lenet, seeded_inputs(lenet, 2, 5, 1000), "calibration");
  CHECK_THROWS_WITH_AS(Int8NetworkPlan(q, 1, "cuda.20_int8_dp4a"),
                       "cuda.20_int8_dp4a is a cuda kernel: int8 networks run on the CPU for now", InputError);
}
