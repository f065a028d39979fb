// Int8 networks (models/quantized_network.hpp): PyTorch's observers and weight quantisation, every
// network run in int8 with each int8 kernel giving the oracle's bytes, and the prediction change
// against FP32 measured (bench/check/quantization_effect.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "bench/check/quantization_effect.hpp"
#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/observer.hpp"
#include "models/quantized_network.hpp"

using namespace convlab;

namespace {
// 10007 values from -1 to 3, dense near -1 and sparse near 3 (a cube), or from -2 to 5 (a square).
std::vector<float> skewed(double lo, double hi, int power) {
  std::vector<float> v;
  for (int r = 0; r < 10007; ++r) v.push_back(static_cast<float>(lo + (hi - lo) * std::pow(r / 10006.0, power)));
  return v;
}
}  // namespace

TEST_CASE("quantize: the histogram observer trims sparse tails as PyTorch's HistogramObserver does") {
  HistogramObserver h;
  h.observe(skewed(-1, 3, 3));
  // PyTorch 1.13's HistogramObserver(reduce_range=False) on the same float32 values: its search
  // keeps [-1, 2.9921875] (bins 0 to 2043 of 2048), scale 0.01565563678741455, zero point 64. The
  // range's ends are integers, where its histc() bins as ours does (models/observer.hpp).
  CHECK(h.searched_range() == std::pair{-1.0f, 2.9921875f});
  CHECK(h.params().scale == doctest::Approx(0.01565563678741455).epsilon(1e-6));
  CHECK(h.params().zero_point == 64);
  // A second batch over a wider range: the histograms merged on a common grid. PyTorch: [-2,
  // 4.99658203125], scale 0.02743757702410221, zero point 73.
  h.observe(skewed(-2, 5, 2));
  CHECK(h.searched_range().first == -2.0f);
  CHECK(h.searched_range().second == doctest::Approx(4.99658203125).epsilon(1e-6));
  CHECK(h.params().scale == doctest::Approx(0.02743757702410221).epsilon(1e-6));
  CHECK(h.params().zero_point == 73);
  // Min/max keeps the whole range: the tail costs it resolution.
  MinMaxObserver m;
  m.observe(skewed(-1, 3, 3));
  CHECK(m.params().scale == doctest::Approx(4.0 / 255));
  // Nothing, or one value, seen: the same parameters min/max would give.
  CHECK(HistogramObserver().params().scale == 1.0f);
  HistogramObserver one;
  one.observe(std::vector<float>(5, 2.0f));
  CHECK(one.params().scale == observed_quant_params(2.0f, 2.0f).scale);
}

TEST_CASE("quantize: a network calibrated with the histogram observer has tighter scales, nearly the same model") {
  const Network net = model_or_throw("resnet8").build(seeded_weights(3));
  const std::vector<float> calibration = seeded_inputs(net, 20, 5, 1000);  // two batches of PyTorch's 16
  const QuantizedNetwork minmax(net, calibration, "minmax"), histogram(net, calibration, "histogram", Observer::histogram);
  int tighter = 0;
  for (int i = 0; i < static_cast<int>(net.layers().size()); ++i) {
    CAPTURE(net.layers()[static_cast<std::size_t>(i)].name);
    CHECK(histogram.activation(i).scale <= minmax.activation(i).scale * 1.0001f);
    tighter += histogram.activation(i).scale < 0.99f * minmax.activation(i).scale;
  }
  CHECK(tighter >= 3);
  const QuantizationEffect e = measure_quantization_effect(histogram, seeded_inputs(net, 32, 5, 2000), "cpu.21_int8_direct_madd");
  CHECK(e.logits_normalised_error < 0.5);
}

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

TEST_CASE("quantize: reduce_range calibrates activations over [0, 127], so that they take the kernels' seven-bit path") {
  const QuantParams wide = observed_quant_params(-1.0f, 3.0f, kReducedQuantMax);
  CHECK(wide.scale == doctest::Approx(4.0 / 127));
  CHECK(wide.zero_point == 32);  // 31.75 rounded
  CHECK(observed_quant_params(-2.0f, -1.0f, kReducedQuantMax).zero_point == 127);
  // On its own calibration inputs a network calibrated so has its activations under 128 but for
  // the odd byte of 128 (the zero point and the value are rounded apart, as in PyTorch: a run
  // meeting one takes the exact path); the same network calibrated over 8 bits has many over 127.
  const Network net = model_or_throw("resnet8").build(seeded_weights(3));
  const std::vector<float> calibration = seeded_inputs(net, 16, 5, 1000);
  const QuantizedNetwork reduced(net, calibration, "7 bits", Observer::minmax, kReducedQuantMax),
      full(net, calibration, "8 bits");
  struct Bytes {
    int largest = 0;
    std::size_t over_127 = 0, all = 0;
  };
  const auto bytes = [&](const QuantizedNetwork& q) {
    Int8NetworkPlan plan(q, 16, "cpu.20_int8_reference");
    std::ranges::copy(calibration, plan.input().data());
    plan.forward();
    Bytes b;
    for (int i = Network::kNetworkInput; i + 1 < static_cast<int>(net.layers().size()); ++i)  // the last: FP32 logits
      for (const std::uint8_t x : plan.activation_bytes(i)) b.largest = std::max<int>(b.largest, x), b.over_127 += x > 127, ++b.all;
    return b;
  };
  const Bytes r = bytes(reduced), f = bytes(full);
  CHECK(r.largest <= 128);
  CHECK(r.over_127 * 10000 < r.all);
  CHECK(f.largest == 255);
  CHECK(f.over_127 * 100 > f.all);
  for (int i = 0; i < static_cast<int>(net.layers().size()); ++i) {
    CAPTURE(net.layers()[static_cast<std::size_t>(i)].name);
    CHECK(reduced.activation(i).zero_point <= 127);
    CHECK(reduced.activation(i).scale == doctest::Approx(full.activation(i).scale * 255 / 127).epsilon(0.02));
  }
}

TEST_CASE("int8 networks: each runs end to end, every int8 kernel giving the oracle's bytes, close to FP32") {
  for (const ModelInfo& model : all_models()) {
    if (model.imagenet_size) continue;  // the same kinds of layer, at a size that keeps CI short
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
