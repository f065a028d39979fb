// A/B statistics against hand-computed values (checked with scipy.stats.mannwhitneyu,
// method="asymptotic"): U with ties, p with tie and continuity corrections, and the verdicts.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "bench/analysis/ab_test.hpp"
#include "tests/results_test_util.hpp"

using namespace convlab;

TEST_CASE("ab_test: Mann-Whitney U and p of a small sample with a tie, by hand") {
  // Pairs (a, b) with a > b: 3 > 2 counts 1, the tie 2 = 2 counts 1/2: U = 1.5. Midranks 1, 2.5,
  // 2.5, 4 ...; sigma^2 = 3*4/12 * (8 - 6/42); z = (1.5 - 6 + 0.5) / sigma = -1.42701.
  const std::vector<double> a = {1, 2, 3}, b = {2, 4, 5, 6};
  const MannWhitney mw = mann_whitney(a, b);
  CHECK(mw.u == 1.5);
  CHECK(mw.z == doctest::Approx(-1.4270121).epsilon(1e-6));
  CHECK(mw.p == doctest::Approx(0.1535764).epsilon(1e-6));
  CHECK(mann_whitney(b, a).u == 3 * 4 - 1.5);  // U_a + U_b = n1 n2
}

TEST_CASE("ab_test: complete separation of 5 and 5 gives U = 0, p = 0.01219") {
  const MannWhitney mw = mann_whitney(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{6, 7, 8, 9, 10});
  CHECK(mw.u == 0);
  CHECK(mw.p == doctest::Approx(0.0121858).epsilon(1e-5));
}

TEST_CASE("ab_test: identical samples: p = 1, ratio 1, no significant difference") {
  const auto s = test::spread_samples(2.0, 0.01, 60);
  const AbComparison c = compare_samples(s, s);
  CHECK(c.test.p == doctest::Approx(1.0));
  CHECK(c.ratio == 1.0);
  CHECK(c.interval.lo <= 1.0);
  CHECK(c.interval.hi >= 1.0);
  CHECK(c.verdict == Verdict::no_difference);
  const std::vector<double> flat(30, 1.5);  // every value tied: sigma 0, still p = 1
  CHECK(mann_whitney(flat, flat).p == 1.0);
}

TEST_CASE("ab_test: a 10% shift is faster or slower, with the interval around the true ratio") {
  const auto a = test::spread_samples(2.0, 0.02, 60), b = test::spread_samples(1.8, 0.02, 60);
  const AbComparison faster = compare_samples(a, b);
  CHECK(faster.ratio == doctest::Approx(0.9).epsilon(0.01));
  CHECK(faster.test.p < 1e-6);
  CHECK(faster.interval.lo <= 0.9);
  CHECK(faster.interval.hi >= 0.9);
  CHECK(faster.interval.hi < 1.0);
  CHECK(faster.verdict == Verdict::faster);
  CHECK(compare_samples(b, a).verdict == Verdict::slower);
}

TEST_CASE("ab_test: wide noise without a shift is too noisy; too few trials are too noisy") {
  const auto a = test::spread_samples(2.0, 0.5, 40);
  auto b = a;
  std::rotate(b.begin(), b.begin() + 5, b.end());
  b[0] *= 1.01;  // the same wide distribution
  const AbComparison c = compare_samples(a, b);
  CHECK(c.test.p > 0.05);
  CHECK(c.verdict == Verdict::too_noisy);
  CHECK(compare_samples(std::vector<double>{1, 1.1, 1.2}, std::vector<double>{2, 2.1, 2.2}).verdict == Verdict::too_noisy);
}

TEST_CASE("ab_test: the bootstrap interval is deterministic for a seed and moves with it") {
  const auto a = test::spread_samples(2.0, 0.1, 30), b = test::spread_samples(2.1, 0.1, 30);
  const Interval one = bootstrap_median_ratio(a, b, 2000, 7), again = bootstrap_median_ratio(a, b, 2000, 7);
  CHECK(one.lo == again.lo);
  CHECK(one.hi == again.hi);
  const Interval other = bootstrap_median_ratio(a, b, 2000, 8);
  CHECK((other.lo != one.lo || other.hi != one.hi));
  CHECK(one.lo < 1.05);
  CHECK(one.hi > 1.05);
}

TEST_CASE("ab_test: a certain 0.3% difference is no meaningful difference; --min-effect moves the line") {
  // 101 distinct samples 0.1% apart around 1 ms, and the same 0.3% faster: every test agrees B
  // differs, but by less than the 2% that matters.
  const std::vector<double> a = test::spread_samples(1.0, 0.001, 101);
  std::vector<double> b = a;
  for (double& x : b) x *= 0.997;
  const AbComparison c = compare_samples(a, b);
  CHECK(c.test.p < 1e-6);
  CHECK(c.interval.hi < 1.0);
  CHECK(c.verdict == Verdict::negligible);
  CHECK(to_string(c.verdict) == "no meaningful difference");
  CHECK(compare_samples(a, b, AbRules{.min_effect = 0.001}).verdict == Verdict::faster);
  // 10% is meaningful at the default.
  for (double& x : b) x = x / 0.997 * 0.9;
  CHECK(compare_samples(a, b).verdict == Verdict::faster);
}
