// Results worth trusting beyond "matches the oracle": constant outputs are flagged (benchdnn's
// MISTRUSTED), and every kernel the registry calls deterministic is bit-identical run to run.
#include <doctest/doctest.h>
#include <omp.h>

#include <cstring>
#include <limits>
#include <vector>

#include "bench/harness/model_bench.hpp"
#include "bench/analysis/mistrust.hpp"
#include "kernels/common/backends.hpp"
#include "models/catalog.hpp"

using namespace convlab;

TEST_CASE("mistrust: constant means every value equal, and neither an empty span nor NaN is") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(is_constant(std::vector<float>{0, 0, 0}));
  CHECK(is_constant(std::vector<float>{2.5f}));
  CHECK_FALSE(is_constant(std::vector<float>{0, 0, 1e-30f}));
  CHECK_FALSE(is_constant(std::vector<float>{}));
  CHECK_FALSE(is_constant(std::vector<float>{nan, nan}));
}

TEST_CASE("mistrust: a network of zero weights is flagged at its first layer, seeded weights are not") {
  const WeightSource zeros = [](const std::string&, const std::vector<std::int64_t>& shape, std::int64_t) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;
    return std::vector<float>(static_cast<std::size_t>(n), 0.0f);
  };
  const Network dead = build_lab_cnn(zeros);
  NetworkPlan plan(dead, 2, {});  // the oracle: no kernel can be blamed, the outputs still prove nothing
  fill_uniform(plan.input().span(), 3, 0);
  plan.forward();
  CHECK(mistrusted_reason(dead, plan) == "layer conv1 outputs the constant 0 for a varying input");

  const Network alive = build_lab_cnn(seeded_weights(1));
  NetworkPlan good(alive, 2, {});
  fill_uniform(good.input().span(), 3, 0);
  good.forward();
  CHECK(mistrusted_reason(alive, good).empty());

  // A constant input may give a constant output: nothing to distrust.
  NetworkPlan flat(dead, 1, {});
  std::fill(flat.input().span().begin(), flat.input().span().end(), 0.5f);
  flat.forward();
  CHECK(mistrusted_reason(dead, flat).empty());
}

TEST_CASE("mistrust: a run with dead weights is measured but flagged, in the flags and the JSON") {
  Result r;
  r.mistrusted = "layer conv1 outputs the constant 0 for a varying input";
  const auto flags = r.flags();
  CHECK(std::find(flags.begin(), flags.end(), "mistrusted") != flags.end());
  r.batch = 1;
  r.latency.p50 = 1;
  CHECK(to_json(r)["mistrusted"] == r.mistrusted);
  CHECK(table_row(r).find("mistrusted: layer conv1") != std::string::npos);
}

namespace {
// Every activation of one forward, as raw bytes: bit-identical means byte-identical.
std::vector<std::vector<char>> activation_bytes(const Network& net, const NetworkPlan& plan) {
  std::vector<std::vector<char>> out;
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const auto s = plan.activation(static_cast<int>(i)).span();
    out.emplace_back(reinterpret_cast<const char*>(s.data()), reinterpret_cast<const char*>(s.data() + s.size()));
  }
  return out;
}
}  // namespace

TEST_CASE("determinism: every CPU kernel the registry calls deterministic is bit-identical across runs and plans") {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);  // a fixed thread count, more than one so that the parallel paths run
  for (const ModelInfo& model : all_models()) {
    if (model.imagenet_size) continue;  // the same layers' kernels at a size that keeps CI short
    const Network net = model.build(seeded_weights(5));
    for (const KernelInfo& k : all_kernels()) {
      if (k.backend != Backend::cpu || !backend_status(k.backend).available) continue;
      if (!unsupported_reason(net, std::string(k.id)).empty()) continue;
      CAPTURE(model.name);
      CAPTURE(k.id);
      if (!k.deterministic) {
        MESSAGE("skipped: the registry says ", k.id, " is not deterministic");
        continue;
      }
      std::vector<std::vector<char>> first;
      for (int plan_round = 0; plan_round < 2; ++plan_round) {  // a fresh plan repacks the weights
        NetworkPlan plan(net, 3, {.default_kernel = std::string(k.id)});
        fill_uniform(plan.input().span(), 11, 0);
        for (int run = 0; run < 2; ++run) {
          plan.forward();
          const auto bytes = activation_bytes(net, plan);
          if (first.empty()) first = bytes;
          for (std::size_t i = 0; i < bytes.size(); ++i) {
            CAPTURE(net.layers()[i].name);
            CHECK(bytes[i] == first[i]);
          }
        }
      }
    }
  }
  omp_set_num_threads(threads);
}
