// A/B statistics for two samples of trial times (A the baseline, B the candidate): the ratio of
// medians B/A, the Mann-Whitney U test and a bootstrap interval for the ratio, and the verdict
// `convlab compare` prints. Pure functions: tested against hand-computed values.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace convlab {

struct MannWhitney {
  double u = 0;  // U of A: pairs (a, b) with a > b, ties counting one half (scipy's U1)
  double z = 0;  // standardised, with continuity and tie corrections
  double p = 1;  // two-sided
};
// Normal approximation with tie and continuity corrections (scipy's method="asymptotic"): good to
// about two digits for n >= 20 per side, rougher below (compare says so). Both samples non-empty.
MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b);

struct Interval {
  double lo = 0, hi = 0;
};
// Percentile bootstrap of median(B) / median(A): each side resampled with replacement,
// `resamples` times, from a seeded mt19937_64 (the same interval on every machine for a seed).
Interval bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, int resamples,
                                std::uint64_t seed, double level = 0.95);

enum class Verdict { faster, slower, negligible, no_difference, too_noisy };
std::string_view to_string(Verdict v);

// The rules, written into compare's output:
//  - faster / slower: p < alpha AND the interval excludes 1 (both tests agree B differs) AND the
//    ratio is at least min_effect away from 1;
//  - no meaningful difference (negligible): B differs for certain, by less than min_effect: a
//    0.3% change that a thousand trials can prove is still not one a user cares about;
//  - too noisy: otherwise, when either side has under kMinSamples trials or the interval reaches
//    past 1 +- noise (a change of that size can be neither shown nor ruled out: measure again,
//    with more trials or a quieter machine);
//  - no significant difference: otherwise (the interval lies within 1 +- noise).
struct AbRules {
  double alpha = 0.05;
  double noise = 0.05;       // +-5%
  double min_effect = 0.02;  // 2%: smaller certain differences are "no meaningful difference"
  int resamples = 2000;
  std::uint64_t seed = 1;
};
inline constexpr std::size_t kMinSamples = 5;
inline constexpr std::size_t kMinSamplesForNormalApprox = 20;

struct AbComparison {
  double median_a = 0, median_b = 0;
  double ratio = 0;  // median_b / median_a: below 1, B is faster
  MannWhitney test;
  Interval interval;
  Verdict verdict = Verdict::too_noisy;
};
AbComparison compare_samples(std::span<const double> a, std::span<const double> b, const AbRules& rules = {});

}  // namespace convlab
