#include "bench/analysis/batching_sim.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "bench/harness/stats.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

void ServiceTimes::add(std::int64_t batch, std::vector<double> samples_ms) {
  if (batch < 1 || samples_ms.empty()) throw InputError(fmt::format("no latency measured for batch {}", batch));
  std::sort(samples_ms.begin(), samples_ms.end());
  if (samples_ms.front() <= 0) throw InputError(fmt::format("batch {}: latencies must be above 0 ms", batch));
  sorted_[batch] = std::move(samples_ms);
}

std::int64_t ServiceTimes::largest() const { return sorted_.empty() ? 0 : sorted_.rbegin()->first; }

double ServiceTimes::at(std::int64_t batch, double u) const {
  const auto q = [u](const std::vector<double>& s) { return percentile(s, u, PercentileMethod::linear); };
  const auto hi = sorted_.lower_bound(batch);
  if (hi == sorted_.end()) return q(sorted_.rbegin()->second);  // callers keep batch <= largest()
  if (hi->first == batch || hi == sorted_.begin()) return q(hi->second);
  const auto lo = std::prev(hi);
  const double f = static_cast<double>(batch - lo->first) / static_cast<double>(hi->first - lo->first);
  return q(lo->second) + f * (q(hi->second) - q(lo->second));
}

double ServiceTimes::mean(std::int64_t batch) const {
  // at() interpolates each quantile linearly between two sizes, so its mean is the interpolated mean.
  const auto avg = [](const std::vector<double>& s) { return std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size()); };
  const auto hi = sorted_.lower_bound(batch);
  if (hi == sorted_.end()) return avg(sorted_.rbegin()->second);
  if (hi->first == batch || hi == sorted_.begin()) return avg(hi->second);
  const auto lo = std::prev(hi);
  const double f = static_cast<double>(batch - lo->first) / static_cast<double>(hi->first - lo->first);
  return avg(lo->second) + f * (avg(hi->second) - avg(lo->second));
}

double ServiceTimes::capacity_per_s(std::int64_t max_batch) const {
  double best = 0;
  for (std::int64_t b = 1; b <= max_batch; ++b) best = std::max(best, static_cast<double>(b) * 1e3 / mean(b));
  return best;
}

namespace {
// Uniform [0, 1) from the top 53 bits: the same stream on every platform (std::*_distribution is not).
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
}  // namespace

PolicyOutcome simulate(const ServiceTimes& service, const BatchPolicy& policy, const SimConfig& config) {
  if (!(config.rate_per_s > 0)) throw InputError(fmt::format("--rate: {} must be above 0", config.rate_per_s));
  const std::size_t n = static_cast<std::size_t>(config.requests);
  std::mt19937_64 arrivals_rng(config.seed), service_rng(config.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<double> arrival(n);
  double t = 0;
  for (double& a : arrival) a = t += -std::log1p(-uniform(arrivals_rng)) * 1e3 / config.rate_per_s;

  const auto big_b = static_cast<std::size_t>(policy.max_batch);
  std::vector<double> response(n);
  double free_at = 0, busy = 0, batches = 0;
  for (std::size_t i = 0; i < n;) {
    const double ready = std::max(free_at, arrival[i]);                 // worker free, someone waiting
    const double deadline = std::max(ready, arrival[i] + policy.max_wait_ms);  // the oldest has waited enough
    const double full = i + big_b - 1 < n ? arrival[i + big_b - 1] : INFINITY;  // max_batch are waiting
    const double start = std::max(ready, std::min(deadline, full));
    std::size_t j = i;
    while (j < n && j < i + big_b && arrival[j] <= start) ++j;
    const double took = service.at(static_cast<std::int64_t>(j - i), uniform(service_rng));
    for (std::size_t k = i; k < j; ++k) response[k] = start + took - arrival[k];
    free_at = start + took;
    busy += took;
    ++batches;
    i = j;
  }
  const std::size_t skip = static_cast<std::size_t>(config.warmup_fraction * static_cast<double>(n));
  std::vector<double> counted(response.begin() + static_cast<std::ptrdiff_t>(skip), response.end());
  const Summary s = summarize(counted);
  PolicyOutcome out{.policy = policy, .mean_ms = s.mean, .p50_ms = s.p50, .p95_ms = s.p95, .p99_ms = s.p99};
  out.throughput_per_s = static_cast<double>(n) * 1e3 / free_at;
  out.utilisation = busy / free_at;
  out.mean_batch = static_cast<double>(n) / batches;
  out.overloaded = config.rate_per_s >= service.capacity_per_s(policy.max_batch);
  return out;
}

std::optional<std::size_t> recommend(const std::vector<PolicyOutcome>& outcomes, double slo_p99_ms) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const PolicyOutcome& o = outcomes[i];
    if (o.overloaded || o.p99_ms > slo_p99_ms) continue;
    if (!best || o.p99_ms < outcomes[*best].p99_ms) best = i;  // strict: earlier (smaller) policies win ties
  }
  return best;
}

}  // namespace convlab
