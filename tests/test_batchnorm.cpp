// BatchNorm folding: a conv with folded weights computes exactly conv-then-BatchNorm.
#include <doctest/doctest.h>

#include <cmath>

#include "kernels/common/error.hpp"
#include "models/batchnorm.hpp"
#include "tests/conv_test_util.hpp"

using namespace convlab;
using namespace convlab::test;

TEST_CASE("batchnorm: the folded conv equals conv followed by BatchNorm (eval mode)") {
  const ConvProblem p = parse_problem("mb2ic3ih7oc4oh7kh3ph1");
  const KernelInfo& oracle = *find_kernel("cpu.00_reference");
  const std::vector<float> x = random_values(p.input_elems(), 1), w = random_values(p.weight_elems(), 2);
  for (const bool with_bias : {false, true}) {
    CAPTURE(with_bias);
    const std::vector<float> b = with_bias ? random_values(4, 3) : std::vector<float>{};
    const BatchNormParams bn{.weight = {0.5f, 1.5f, -1.0f, 2.0f}, .bias = {0.1f, -0.2f, 0.3f, 0.0f},
                             .running_mean = {0.4f, -0.3f, 0.0f, 1.0f}, .running_var = {0.5f, 2.0f, 1.0f, 0.1f}};
    std::vector<float> expect = run_kernel(oracle, p, x, w, b, Activation::none);
    const std::size_t plane = static_cast<std::size_t>(p.out_h() * p.out_w());
    for (std::size_t i = 0; i < expect.size(); ++i) {
      const std::size_t k = (i / plane) % 4;
      expect[i] = (expect[i] - bn.running_mean[k]) / std::sqrt(bn.running_var[k] + 1e-5f) * bn.weight[k] + bn.bias[k];
    }
    std::vector<float> folded_w = w, folded_b = b;
    fold_batchnorm(bn, folded_w, folded_b);
    REQUIRE(folded_b.size() == 4);
    const std::vector<float> got = run_kernel(oracle, p, x, folded_w, folded_b, Activation::none);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expect[i]).epsilon(1e-5));
  }
}

TEST_CASE("batchnorm: parameters that do not fit are errors, not crashes") {
  std::vector<float> w(8), b;
  BatchNormParams bn{.weight = {1, 1}, .bias = {0, 0}, .running_mean = {0, 0}, .running_var = {1, 1}};
  CHECK_NOTHROW(fold_batchnorm(bn, w, b));
  BatchNormParams short_bias = bn;
  short_bias.bias = {0};
  CHECK_THROWS_AS(fold_batchnorm(short_bias, w, b), InputError);
  std::vector<float> odd(7);
  CHECK_THROWS_AS(fold_batchnorm(bn, odd, b), InputError);
  BatchNormParams negative = bn;
  negative.running_var = {1, -1};
  CHECK_THROWS_WITH_AS(fold_batchnorm(negative, w, b), "batchnorm: running_var[1] = -1 is not a variance", InputError);
}

TEST_CASE("batchnorm: the four parameters are fetched by their state_dict names") {
  std::vector<std::string> asked;
  const WeightSource source = [&](const std::string& name, const std::vector<std::int64_t>& shape, std::int64_t) {
    asked.push_back(name);
    return std::vector<float>(static_cast<std::size_t>(shape.at(0)), 1.0f);
  };
  const BatchNormParams bn = load_batchnorm(source, "layer1.0.bn2", 5);
  CHECK(asked == std::vector<std::string>{"layer1.0.bn2.weight", "layer1.0.bn2.bias", "layer1.0.bn2.running_mean",
                                          "layer1.0.bn2.running_var"});
  CHECK(bn.running_var.size() == 5);
}
