// Statistics against values computed independently with numpy 1.24:
//   np.percentile(a, q)                          (linear, numpy's default)
//   np.percentile(a, q, method='inverted_cdf')   (nearest rank)
//   a.mean(), a.std(ddof=1)
#include <doctest/doctest.h>

#include <vector>

#include "bench/harness/stats.hpp"
#include "kernels/common/error.hpp"

using namespace convlab;

namespace {
struct Expected {
  const char* name;
  std::vector<double> sample;
  double p50, p90, p95, p99;      // linear
  double r50, r90, r95, r99;      // nearest rank
  double mean, std;
};

const std::vector<Expected> kCases = {
    {"n=1", {3.5}, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 0.0},
    {"n=2", {2.0, 1.0}, 1.5, 1.9, 1.95, 1.99, 1.0, 2.0, 2.0, 2.0, 1.5, 0.7071067811865476},
    {"odd", {5.0, 1.0, 4.0, 2.0, 3.0}, 3.0, 4.6, 4.8, 4.96, 3.0, 5.0, 5.0, 5.0, 3.0, 1.5811388300841898},
    {"even", {0.7, 0.1, 0.4, 0.9, 0.2, 0.3}, 0.35, 0.8, 0.85, 0.89, 0.3, 0.9, 0.9, 0.9, 0.43333333333333335,
     0.30767948691238206},
    {"ties", {2.0, 2.0, 1.0, 2.0, 3.0, 3.0, 1.0}, 2.0, 3.0, 3.0, 3.0, 2.0, 3.0, 3.0, 3.0, 2.0, 0.816496580927726},
    {"unsorted", {9.25, 0.5, 7.0, 3.75, 12.5, 1.0, 4.5, 8.0, 2.25, 6.0, 10.0}, 6.0, 10.0, 11.25, 12.25, 6.0, 10.0,
     12.5, 12.5, 5.886363636363637, 3.87679577158063},
};
}  // namespace

TEST_CASE("stats: linear percentiles, mean and sample std match numpy") {
  for (const Expected& e : kCases) {
    CAPTURE(e.name);
    const Summary s = summarize(e.sample, PercentileMethod::linear);
    CHECK(s.n == e.sample.size());
    CHECK(s.p50 == doctest::Approx(e.p50).epsilon(1e-12));
    CHECK(s.p90 == doctest::Approx(e.p90).epsilon(1e-12));
    CHECK(s.p95 == doctest::Approx(e.p95).epsilon(1e-12));
    CHECK(s.p99 == doctest::Approx(e.p99).epsilon(1e-12));
    CHECK(s.mean == doctest::Approx(e.mean).epsilon(1e-12));
    CHECK(s.std == doctest::Approx(e.std).epsilon(1e-12));
  }
}

TEST_CASE("stats: nearest-rank percentiles match numpy's inverted_cdf") {
  for (const Expected& e : kCases) {
    CAPTURE(e.name);
    const Summary s = summarize(e.sample, PercentileMethod::nearest_rank);
    CHECK(s.p50 == e.r50);
    CHECK(s.p90 == e.r90);
    CHECK(s.p95 == e.r95);
    CHECK(s.p99 == e.r99);
  }
}

TEST_CASE("stats: nearest rank is exact where q n is a whole number in decimal but not in binary") {
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  CHECK(summarize(twenty, PercentileMethod::nearest_rank).p95 == 19.0);  // 0.95 x 20 = 19
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  CHECK(summarize(hundred, PercentileMethod::nearest_rank).p99 == 99.0);
}

TEST_CASE("stats: min, max and the input left in trial order") {
  const std::vector<double> sample = {4.0, 1.0, 3.0};
  const Summary s = summarize(sample);
  CHECK(s.min == 1.0);
  CHECK(s.max == 4.0);
  CHECK(sample == std::vector<double>{4.0, 1.0, 3.0});
}

TEST_CASE("stats: flags") {
  SUBCASE("p99 on fewer than 100 trials is flagged, on 100 it is not") {
    CHECK(summarize(std::vector<double>(99, 1.0)).flags == std::vector<std::string>{"p99_few_trials"});
    CHECK(summarize(std::vector<double>(100, 1.0)).flags.empty());
  }
  SUBCASE("a noisy sample is flagged by its coefficient of variation") {
    std::vector<double> noisy(100, 1.0);
    for (std::size_t i = 0; i < noisy.size(); i += 2) noisy[i] = 1.5;  // alternating: no drift, cv 0.2
    const Summary s = summarize(noisy);
    CHECK(s.cv == doctest::Approx(0.2).epsilon(0.01));
    CHECK(s.flags == std::vector<std::string>{"noisy_cv"});
  }
  SUBCASE("a sample that slows down half way is flagged as drifting") {
    std::vector<double> drifting(100, 1.0);
    for (std::size_t i = 50; i < 100; ++i) drifting[i] = 1.08;
    const Summary s = summarize(drifting);
    CHECK(s.drift > kMaxDrift);
    CHECK(s.flags == std::vector<std::string>{"drift"});
  }
}

TEST_CASE("stats: an empty sample and an unknown method are errors") {
  CHECK_THROWS_AS(summarize(std::vector<double>{}), InputError);
  CHECK_THROWS_WITH_AS(parse_percentile_method("median"),
                       "unknown percentile method 'median' (choices: linear, nearest-rank)", InputError);
  CHECK(parse_percentile_method("nearest-rank") == PercentileMethod::nearest_rank);
}
