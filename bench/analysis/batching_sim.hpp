// A discrete-event simulation of a dynamic batcher: Poisson arrivals at a declared rate, one
// worker, FIFO. When the worker is free and requests wait, it starts a batch as soon as either
// max_batch requests are waiting or the oldest has waited max_wait; the batch takes the measured
// latency for its size. `convlab policy` runs it over a grid of policies. Tested against the M/D/1
// closed form (max_batch 1, max_wait 0, constant service).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace convlab {

// Measured latency per batch size. A batch of size b draws quantile u of the trials measured at
// the sizes around b, interpolated linearly in b (sampling keeps the measured spread, which is
// what a p99 is made of); below the smallest measured size it takes the smallest's latency.
class ServiceTimes {
 public:
  void add(std::int64_t batch, std::vector<double> samples_ms);  // InputError: empty or not > 0
  std::int64_t largest() const;
  const std::map<std::int64_t, std::vector<double>>& measured() const { return sorted_; }
  double at(std::int64_t batch, double u) const;  // u in [0, 1]
  double median(std::int64_t batch) const { return at(batch, 0.5); }
  double mean(std::int64_t batch) const;  // the mean of the draws at(batch, u), u uniform
  // The most items per second a batcher with this max batch can serve: max over b <= B of
  // b / mean(b). The mean, not the median: a slow tail takes the worker's time too (rho = lambda E[S]).
  double capacity_per_s(std::int64_t max_batch) const;

 private:
  std::map<std::int64_t, std::vector<double>> sorted_;
};

struct BatchPolicy {
  std::int64_t max_batch = 1;
  double max_wait_ms = 0;
};

struct SimConfig {
  double rate_per_s = 100;
  std::int64_t requests = 20000;
  double warmup_fraction = 0.1;  // the first requests, while the queue fills from empty, are not counted
  std::uint64_t seed = 1;        // the same arrivals for every policy given a seed
};

struct PolicyOutcome {
  BatchPolicy policy;
  double mean_ms = 0, p50_ms = 0, p95_ms = 0, p99_ms = 0;  // response: queueing + batch latency
  double throughput_per_s = 0;  // requests completed / simulated time
  double utilisation = 0;       // share of the time the worker is busy
  double mean_batch = 0;
  bool overloaded = false;      // rate >= capacity: the queue grows without bound
};

PolicyOutcome simulate(const ServiceTimes& service, const BatchPolicy& policy, const SimConfig& config);

// The policy that meets p99 <= slo with the most headroom (ties: the smaller batch, then wait);
// nothing when none does.
std::optional<std::size_t> recommend(const std::vector<PolicyOutcome>& outcomes, double slo_p99_ms);

}  // namespace convlab
