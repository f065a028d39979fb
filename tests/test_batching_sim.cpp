// The dynamic-batching simulator against queueing theory: with max batch 1, no wait and a
// constant service time D, it is an M/D/1 queue, whose mean wait is Wq = rho D / (2 (1 - rho)),
// rho = lambda D (Pollaczek-Khinchine). And the capacity edge: rho >= 1 is overloaded.
#include <doctest/doctest.h>

#include "bench/analysis/batching_sim.hpp"
#include "kernels/common/error.hpp"

using namespace convlab;

namespace {
ServiceTimes constant(double per_batch_ms, double per_item_ms, std::int64_t largest) {
  ServiceTimes s;
  for (std::int64_t b = 1; b <= largest; b *= 2) s.add(b, {per_batch_ms + per_item_ms * static_cast<double>(b)});
  return s;
}
}  // namespace

TEST_CASE("batching_sim: M/D/1 mean waiting time within 3% at rho 0.5 and 0.8") {
  const double d = 2.0;  // ms
  const ServiceTimes service = constant(d, 0, 1);
  for (const double rho : {0.5, 0.8}) {
    CAPTURE(rho);
    const double rate = rho / d * 1e3;  // per second
    const PolicyOutcome o = simulate(service, {1, 0}, {.rate_per_s = rate, .requests = 1'000'000, .seed = 3});
    const double wq = rho * d / (2 * (1 - rho));
    CHECK(o.mean_ms - d == doctest::Approx(wq).epsilon(0.03));
    CHECK(o.utilisation == doctest::Approx(rho).epsilon(0.02));
    CHECK(o.throughput_per_s == doctest::Approx(rate).epsilon(0.02));
    CHECK(o.mean_batch == 1.0);
    CHECK_FALSE(o.overloaded);
  }
}

TEST_CASE("batching_sim: at or past capacity the policy is overloaded and none is recommended") {
  const ServiceTimes service = constant(2.0, 0, 1);  // capacity 500/s
  const PolicyOutcome o = simulate(service, {1, 0}, {.rate_per_s = 500, .requests = 20000});
  CHECK(o.overloaded);
  CHECK(o.utilisation > 0.97);
  CHECK_FALSE(recommend({o}, 1e9).has_value());
}

TEST_CASE("batching_sim: batching serves a rate batch 1 cannot, and the recommendation has the most headroom") {
  // 1 ms per batch + 0.1 ms per item: batch 1 serves 909/s, batch 8 serves 4444/s.
  const ServiceTimes service = constant(1.0, 0.1, 8);
  const SimConfig sim{.rate_per_s = 2000, .requests = 50000};
  std::vector<PolicyOutcome> outcomes;
  for (std::int64_t b : {1, 2, 4, 8}) outcomes.push_back(simulate(service, {b, 1.0}, sim));
  CHECK(outcomes[0].overloaded);
  CHECK_FALSE(outcomes[3].overloaded);
  CHECK(outcomes[3].mean_batch > 1.5);
  const auto best = recommend(outcomes, 20);
  REQUIRE(best.has_value());
  for (const PolicyOutcome& o : outcomes)
    if (!o.overloaded) CHECK(outcomes[*best].p99_ms <= o.p99_ms);
}

TEST_CASE("batching_sim: deterministic for a seed; service times interpolate between measured sizes") {
  ServiceTimes s;
  s.add(1, {1.0});
  s.add(4, {4.0, 4.0});
  CHECK(s.median(2) == doctest::Approx(2.0));
  CHECK(s.median(4) == 4.0);
  CHECK(s.capacity_per_s(4) == doctest::Approx(1000.0));
  const SimConfig sim{.rate_per_s = 300, .requests = 5000, .seed = 9};
  const PolicyOutcome one = simulate(s, {4, 2.0}, sim), two = simulate(s, {4, 2.0}, sim);
  CHECK(one.p99_ms == two.p99_ms);
  CHECK(one.mean_ms == two.mean_ms);
  CHECK_THROWS_AS(s.add(8, {}), InputError);
}

TEST_CASE("batching_sim: capacity counts the slow tail (the mean service time, not the median)") {
  ServiceTimes s;
  s.add(1, {1, 1, 1, 1, 6});  // median 1 ms, mean 2 ms
  CHECK(s.capacity_per_s(1) == doctest::Approx(500.0));
  CHECK(simulate(s, {1, 0}, {.rate_per_s = 600, .requests = 5000}).overloaded);
}
