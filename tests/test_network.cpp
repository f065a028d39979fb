// The network executor: shapes resolved at build time, deterministic seeded weights, batch
// items computed independently, and a forward pass that allocates nothing.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

#include "kernels/common/error.hpp"
#include "models/catalog.hpp"

using namespace convlab;

// Counts every heap allocation of this test binary, so a test can assert a region makes none.
namespace {
std::atomic<long> g_allocations{0};
}
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow pair too (std::stable_sort's buffer uses it): left to the library, ASan's nothrow new
// would hand memory to the free() above, an alloc-dealloc mismatch the sanitizer build reported.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

TEST_CASE("network: lab-cnn has the documented layers and shapes") {
  const Network net = build_lab_cnn(seeded_weights(1));
  const auto& layers = net.layers();
  REQUIRE(layers.size() == 7);
  CHECK(layers[0].name == "conv1");
  CHECK(to_string(layers[0].conv) == "mb1ic3ih32oc16oh32kh3ph1n\"lab-cnn:conv1\"");
  CHECK(layers[0].epilogue.activation == Activation::relu);
  CHECK(layers[1].out_item == nchw(1, 16, 16, 16));
  CHECK(layers[2].out_item == nchw(1, 32, 16, 16));
  CHECK(layers[3].out_item == nchw(1, 32, 8, 8));
  CHECK(layers[4].out_item == nchw(1, 64, 8, 8));
  CHECK(layers[5].out_item == nchw(1, 64, 1, 1));
  CHECK(layers[6].name == "fc");
  CHECK(net.output_item() == nchw(1, 10, 1, 1));
  // conv1 448 + conv2 4640 + conv3 18496 + fc 650
  CHECK(net.parameter_count() == 448 + 4640 + 18496 + 650);
  CHECK(net.flops_per_item() == doctest::Approx(2.0 * (32 * 32 * 16 * 27 + 16 * 16 * 32 * 144 + 8 * 8 * 64 * 288 + 640)));
}

TEST_CASE("network: seeded weights are deterministic, per name, with roles taken from the name") {
  const WeightSource a = seeded_weights(7), b = seeded_weights(7), c = seeded_weights(8);
  const auto w1 = a("conv1.weight", {64, 3, 3, 3}, 27);
  CHECK(w1 == b("conv1.weight", {64, 3, 3, 3}, 27));
  CHECK(w1 != c("conv1.weight", {64, 3, 3, 3}, 27));
  CHECK(w1 != a("conv2.weight", {64, 3, 3, 3}, 27));
  // He-normal: mean ~0, std ~sqrt(2 / fan_in) (1728 samples: within 10%)
  double sum = 0, sum2 = 0;
  for (float v : w1) sum += v, sum2 += double(v) * v;
  const double mean = sum / w1.size(), std_dev = std::sqrt(sum2 / w1.size() - mean * mean);
  CHECK(std::abs(mean) < 0.05);
  CHECK(std_dev == doctest::Approx(std::sqrt(2.0 / 27)).epsilon(0.1));
  for (float v : a("fc.bias", {10}, 64)) CHECK(std::abs(v) <= 1.0f / 8);
  // BatchNorm: statistics far from the identity, so that folding is really exercised
  for (float v : a("bn1.weight", {16}, 16)) CHECK((v >= 0.5f && v < 1.5f));
  for (float v : a("bn1.running_mean", {16}, 16)) CHECK((v >= -0.5f && v < 0.5f));
  for (float v : a("bn1.running_var", {16}, 16)) CHECK((v >= 0.5f && v < 2.0f));
  CHECK(a("bn1.running_var", {16}, 16) != std::vector<float>(16, 1.0f));
}

TEST_CASE("network: each batch item is computed independently of the others") {
  const Network net = build_lab_cnn(seeded_weights(3));
  NetworkPlan one(net, 1, {});
  NetworkPlan four(net, 4, {});
  const std::int64_t item = net.input_item().elems();
  for (int n = 0; n < 4; ++n) fill_uniform(four.input().span().subspan(n * item, item), 5, n);
  fill_uniform(one.input().span(), 5, 2);
  one.forward();
  four.forward();
  const std::int64_t classes = 10;
  for (std::int64_t i = 0; i < classes; ++i) CHECK(four.output().data()[2 * classes + i] == one.output().data()[i]);
  CHECK(four.output().data()[0] != one.output().data()[0]);
}

TEST_CASE("network: a forward pass allocates nothing, and the plan accounts for its memory") {
  const Network net = build_lab_cnn(seeded_weights(1));
  NetworkPlan plan(net, 8, {});
  plan.forward();  // OpenMP creates its thread pool on first use: not the forward pass's doing
  const long before = g_allocations.load();
  for (int i = 0; i < 3; ++i) plan.forward();
  CHECK(g_allocations.load() == before);
  const MemoryAccount& m = plan.memory();
  CHECK(m.weights_bytes == static_cast<std::size_t>(net.parameter_count()) * sizeof(float));
  // input + the seven layer outputs, at batch 8
  const std::size_t per_item = 3 * 32 * 32 + 16 * 32 * 32 + 16 * 16 * 16 + 32 * 16 * 16 + 32 * 8 * 8 + 64 * 8 * 8 + 64 + 10;
  CHECK(m.activations_bytes == 8 * per_item * sizeof(float));
  CHECK(plan.kernel_ids()[0] == "cpu.00_reference");
}

TEST_CASE("network: a plan names the kernel each layer runs, cpu.auto's choice rather than cpu.auto") {
  const Network net = build_lab_cnn(seeded_weights(1));
  NetworkPlan plan(net, 1, {.default_kernel = "cpu.auto"});
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    if (net.layers()[i].kind != LayerKind::conv) continue;
    const std::string& id = plan.kernel_ids()[i];
    CHECK(id.starts_with("cpu.0"));
    // explain() says "chose <id>: ..." for the same kernel
    CHECK(plan.explain(static_cast<int>(i)).starts_with("chose " + id));
  }
}

TEST_CASE("network: bad plans are errors") {
  const Network net = build_lab_cnn(seeded_weights(1));
  CHECK_THROWS_WITH_AS(NetworkPlan(net, 0, {}), "batch 0 is not a positive integer", InputError);
  CHECK_THROWS_WITH_AS(NetworkPlan(net, 1, {.default_kernel = "cpu.42_nope"}),
                       "unknown kernel 'cpu.42_nope' for layer conv1", InputError);
  CHECK_THROWS_AS(NetworkPlan(net, std::int64_t{1} << 40, {}), std::bad_alloc);
  CHECK(unsupported_reason(net, "cpu.00_reference").empty());
  CHECK(find_model("lab-cnn") != nullptr);
  CHECK(find_model("resnet-9000") == nullptr);
}

TEST_CASE("network: the timed forward pass computes the same outputs and times every layer") {
  const Network net = build_resnet8(seeded_weights(2));
  NetworkPlan plain(net, 2, {}), timed(net, 2, {});
  fill_uniform(plain.input().span(), 2, 0);
  fill_uniform(timed.input().span(), 2, 0);
  plain.forward();
  std::vector<double> ms(net.layers().size(), -1.0);
  timed.forward_timed(ms);
  for (std::int64_t i = 0; i < plain.output().elems(); ++i) CHECK(plain.output().data()[i] == timed.output().data()[i]);
  for (double t : ms) CHECK(t >= 0.0);
  std::vector<double> too_few(3);
  CHECK_THROWS_AS(timed.forward_timed(too_few), InputError);
}
