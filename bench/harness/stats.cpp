#include "bench/harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/common/error.hpp"

namespace convlab {

std::string_view to_string(PercentileMethod method) {
  return method == PercentileMethod::linear ? "linear" : "nearest-rank";
}

PercentileMethod parse_percentile_method(std::string_view name) {
  if (name == "linear") return PercentileMethod::linear;
  if (name == "nearest-rank") return PercentileMethod::nearest_rank;
  throw InputError("unknown percentile method '" + std::string(name) + "' (choices: linear, nearest-rank)");
}

double percentile(std::span<const double> sorted, double q, PercentileMethod method) {
  const std::size_t n = sorted.size();
  if (method == PercentileMethod::nearest_rank) {
    // The epsilon keeps q n = 19.000000000000004 (0.95 x 20 in binary) at rank 19.
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n) - 1e-9));
    return sorted[std::clamp<std::size_t>(rank, 1, n) - 1];
  }
  const double pos = q * static_cast<double>(n - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, n - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

namespace {
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return percentile(v, 0.5, PercentileMethod::linear);
}
}  // namespace

Summary summarize(std::span<const double> samples, PercentileMethod method) {
  if (samples.empty()) throw InputError("cannot summarise an empty sample");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  Summary s;
  s.n = sorted.size();
  s.p50 = percentile(sorted, 0.50, method);
  s.p90 = percentile(sorted, 0.90, method);
  s.p95 = percentile(sorted, 0.95, method);
  s.p99 = percentile(sorted, 0.99, method);
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.n);
  if (s.n > 1) {
    double ss = 0;
    for (double x : sorted) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / static_cast<double>(s.n - 1));
  }
  s.cv = s.mean > 0 ? s.std / s.mean : 0;
  if (s.n >= 4) {
    const std::size_t half = s.n / 2;
    const double first = median_of({samples.begin(), samples.begin() + half});
    const double second = median_of({samples.end() - half, samples.end()});
    const double median = percentile(sorted, 0.5, PercentileMethod::linear);
    s.drift = median > 0 ? (second - first) / median : 0;
  }
  if (s.n < kMinTrialsForP99) s.flags.emplace_back("p99_few_trials");
  if (s.cv > kMaxCv) s.flags.emplace_back("noisy_cv");
  if (std::abs(s.drift) > kMaxDrift) s.flags.emplace_back("drift");
  return s;
}

}  // namespace convlab
