// Statistics over the full sample of trials. Nothing is discarded: outliers are the data.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace convlab {

enum class PercentileMethod {
  linear,        // numpy's default: interpolate between order statistics at (n - 1) q
  nearest_rank,  // the smallest sample with at least q of the sample at or below it
};
std::string_view to_string(PercentileMethod method);
PercentileMethod parse_percentile_method(std::string_view name);  // throws InputError

// Thresholds behind the flags, documented in the README.
inline constexpr std::size_t kMinTrialsForP99 = 100;  // fewer: p99 is a guess
inline constexpr double kMaxCv = 0.10;                // std / mean above 10%: noisy
inline constexpr double kMaxDrift = 0.05;             // halves' medians differ by over 5%

// q in [0, 1]; `sorted` ascending and non-empty.
double percentile(std::span<const double> sorted, double q, PercentileMethod method);

struct Summary {
  std::size_t n = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  double mean = 0;
  double std = 0;  // sample standard deviation (divides by n - 1); 0 when n = 1
  double min = 0, max = 0;
  double cv = 0;     // std / mean
  double drift = 0;  // (median of second half - median of first half) / median, in trial order
  std::vector<std::string> flags;  // "p99_few_trials", "noisy_cv", "drift"
};

// Throws InputError for an empty sample.
Summary summarize(std::span<const double> samples, PercentileMethod method = PercentileMethod::linear);

}  // namespace convlab
