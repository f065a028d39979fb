#include "bench/analysis/ab_test.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bench/harness/stats.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::negligible: return "no meaningful difference";
    case Verdict::no_difference: return "no significant difference";
    case Verdict::too_noisy: return "too noisy";
  }
  return "?";
}

MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) throw InputError("Mann-Whitney U needs two non-empty samples");
  // Midranks of the pooled sample; each tie group of size t adds t^3 - t to the correction.
  struct Item {
    double x;
    bool from_a;
  };
  std::vector<Item> pooled;
  for (double x : a) pooled.push_back({x, true});
  for (double x : b) pooled.push_back({x, false});
  std::sort(pooled.begin(), pooled.end(), [](const Item& l, const Item& r) { return l.x < r.x; });
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size()), n = n1 + n2;
  double rank_sum_a = 0, ties = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].x == pooled[i].x) ++j;
    const double midrank = (static_cast<double>(i + j) + 1) / 2;  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].from_a) rank_sum_a += midrank;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  MannWhitney mw;
  mw.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double sigma = std::sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))));
  if (sigma == 0) return mw;  // every value equal: no evidence of any difference, p = 1
  const double d = mw.u - mean;
  mw.z = (d - std::copysign(std::min(0.5, std::abs(d)), d)) / sigma;
  mw.p = std::min(1.0, std::erfc(std::abs(mw.z) / std::sqrt(2.0)));
  return mw;
}

namespace {
double median_sorted_copy(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  return percentile(v, 0.5, PercentileMethod::linear);
}
}  // namespace

Interval bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, int resamples,
                                std::uint64_t seed, double level) {
  if (a.empty() || b.empty() || resamples < 1) throw InputError("bootstrap needs two non-empty samples");
  std::mt19937_64 rng(seed);  // its sequence is fixed by the standard; the index mapping below too
  const auto draw = [&rng](std::span<const double> from, std::vector<double>& into) {
    into.resize(from.size());
    for (double& x : into) x = from[static_cast<std::size_t>((rng() >> 32) * from.size() >> 32)];
  };
  std::vector<double> ratios, ra, rb;
  for (int i = 0; i < resamples; ++i) {
    draw(a, ra);
    draw(b, rb);
    const double ma = median_sorted_copy(ra);
    ratios.push_back(ma > 0 ? median_sorted_copy(rb) / ma : INFINITY);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - level) / 2;
  return {percentile(ratios, tail, PercentileMethod::linear), percentile(ratios, 1 - tail, PercentileMethod::linear)};
}

AbComparison compare_samples(std::span<const double> a, std::span<const double> b, const AbRules& rules) {
  AbComparison c;
  c.median_a = summarize(a).p50;
  c.median_b = summarize(b).p50;
  c.ratio = c.median_a > 0 ? c.median_b / c.median_a : INFINITY;
  c.test = mann_whitney(a, b);
  c.interval = bootstrap_median_ratio(a, b, rules.resamples, rules.seed);
  const bool excludes_one = c.interval.hi < 1 || c.interval.lo > 1;
  if (std::min(a.size(), b.size()) < kMinSamples) {
    c.verdict = Verdict::too_noisy;
  } else if (c.test.p < rules.alpha && excludes_one) {
    if (std::fabs(c.ratio - 1) < rules.min_effect) c.verdict = Verdict::negligible;
    else c.verdict = c.ratio < 1 ? Verdict::faster : Verdict::slower;
  } else if (c.interval.lo < 1 - rules.noise || c.interval.hi > 1 + rules.noise) {
    c.verdict = Verdict::too_noisy;
  } else {
    c.verdict = Verdict::no_difference;
  }
  return c;
}

}  // namespace convlab
