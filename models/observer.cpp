#include "models/observer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace convlab {

QuantParams observed_quant_params(float min, float max, std::int32_t quant_max) {
  min = std::min(min, 0.0f);
  max = std::max(max, 0.0f);
  const float scale = std::max((max - min) / static_cast<float>(quant_max), FLT_EPSILON);
  const auto zero_point = static_cast<std::int32_t>(std::nearbyint(-min / scale));
  return {.scale = scale, .zero_point = std::clamp(zero_point, 0, quant_max)};
}

std::string_view to_string(Observer o) { return o == Observer::histogram ? "histogram" : "minmax"; }

void MinMaxObserver::observe(std::span<const float> values) {
  for (const float v : values) {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
}

QuantParams MinMaxObserver::params(std::int32_t quant_max) const { return observed_quant_params(min_, max_, quant_max); }

namespace {

// torch.histc: `bins` equal bins over [lo, hi]; values outside (and NaN) are left out, hi itself
// falls in the last bin. The bin of a value is computed in float, as PyTorch computes it.
void add_histogram(std::span<const float> values, float lo, float hi, std::vector<double>& histogram) {
  const auto bins = static_cast<int>(histogram.size());
  for (const float v : values) {
    if (!(v >= lo && v <= hi)) continue;
    const int bin = static_cast<int>((v - lo) * static_cast<float>(bins) / (hi - lo));
    histogram[static_cast<std::size_t>(std::min(bin, bins - 1))] += 1;
  }
}

// density x (integral of x^2 from begin to end): the squared error of values spread evenly
// between begin and end around their quantised level.
double norm(double begin, double end, double density) { return density * (end * end * end - begin * begin * begin) / 3; }

}  // namespace

void HistogramObserver::observe(std::span<const float> values) {
  if (values.empty()) return;
  const auto [lo_it, hi_it] = std::ranges::minmax_element(values);
  const float lo = *lo_it, hi = *hi_it;
  if (!(min_ < max_)) {  // nothing yet, or one value so far: start from this batch, as PyTorch does
    min_ = lo, max_ = hi;
    std::ranges::fill(histogram_, 0.0);
    if (min_ < max_) add_histogram(values, min_, max_, histogram_);
    return;
  }
  // A common grid: the old histogram's bins split kUpsample ways; the combined range's bins are
  // whole numbers `downsample` of those fine bins, its max relaxed to fit (its min stays).
  const float combined_min = std::min(lo, min_);
  float combined_max = std::max(hi, max_);
  const double fine = (static_cast<double>(max_) - min_) / (kBins * kUpsample);
  const auto downsample = static_cast<long long>(std::ceil((combined_max - combined_min) / (kBins * fine)));
  combined_max = static_cast<float>(combined_max + (downsample * (kBins * fine) - (combined_max - combined_min)));
  const auto start = static_cast<long long>(std::nearbyint((min_ - combined_min) / fine));
  std::vector<double> combined(kBins, 0.0);
  add_histogram(values, combined_min, combined_max, combined);
  if (combined_min == min_ && combined_max == max_) {
    for (int i = 0; i < kBins; ++i) combined[i] += histogram_[i];
  } else {
    // Old bin i spreads its count evenly over fine bins [start + i up, start + (i + 1) up); new
    // bin b gathers fine bins [b down, (b + 1) down).
    for (int i = 0; i < kBins; ++i) {
      if (histogram_[i] == 0) continue;
      const long long begin = start + static_cast<long long>(i) * kUpsample, end = begin + kUpsample;
      for (long long b = begin / downsample; b < kBins && b * downsample < end; ++b) {
        const long long overlap = std::min(end, (b + 1) * downsample) - std::max(begin, b * downsample);
        combined[static_cast<std::size_t>(b)] += histogram_[i] * static_cast<double>(overlap) / kUpsample;
      }
    }
  }
  histogram_ = std::move(combined);
  min_ = combined_min, max_ = combined_max;
}

// The L2 error of quantising the histogram to kQuantLevels levels over bins [start_bin, end_bin]
// (PyTorch's _compute_quantization_error).
double HistogramObserver::quantization_error(int start_bin, int end_bin) const {
  const double bin_width = (static_cast<double>(max_) - min_) / kBins;
  const double dst_width = bin_width * (end_bin - start_bin + 1) / kQuantLevels;
  if (dst_width == 0.0) return 0.0;
  double error = 0;
  for (int i = 0; i < kBins; ++i) {
    if (histogram_[i] == 0) continue;
    const double density = histogram_[i] / bin_width;
    const double begin = (i - start_bin) * bin_width, end = begin + bin_width;
    const double dst_begin = std::clamp(std::floor(begin / dst_width), 0.0, kQuantLevels - 1.0);
    const double dst_end = std::clamp(std::floor(end / dst_width), 0.0, kQuantLevels - 1.0);
    error += norm(begin - (dst_begin + 0.5) * dst_width, dst_width / 2, density);
    error += (dst_end - dst_begin - 1) * norm(-dst_width / 2, dst_width / 2, density);
    error += norm(-dst_width / 2, end - (dst_end * dst_width + dst_width / 2), density);
  }
  return error;
}

// PyTorch's _non_linear_param_search.
std::pair<float, float> HistogramObserver::searched_range() const {
  if (!(min_ < max_)) return {min_, max_};
  std::vector<double> cumulative(kBins);
  double total = 0;
  for (int i = 0; i < kBins; ++i) cumulative[i] = total += histogram_[i];
  constexpr double kStep = 1e-5;
  double alpha = 0, beta = 1, norm_min = INFINITY;
  int start_bin = 0, end_bin = kBins - 1;
  while (alpha < beta) {
    const double next_alpha = alpha + kStep, next_beta = beta - kStep;
    int l = start_bin, r = end_bin;
    while (l < end_bin && cumulative[l] < next_alpha * total) ++l;
    while (r > start_bin && cumulative[r] > next_beta * total) --r;
    int next_start = start_bin, next_end = end_bin;
    if (l - start_bin > end_bin - r) {
      next_start = l;
      alpha = next_alpha;
    } else {
      next_end = r;
      beta = next_beta;
    }
    if (next_start == start_bin && next_end == end_bin) continue;
    const double error = quantization_error(next_start, next_end);
    if (error > norm_min) break;
    norm_min = error;
    start_bin = next_start, end_bin = next_end;
  }
  const float bin_width = (max_ - min_) / kBins;
  return {min_ + bin_width * static_cast<float>(start_bin), min_ + bin_width * static_cast<float>(end_bin + 1)};
}

QuantParams HistogramObserver::params(std::int32_t quant_max) const {
  const auto [lo, hi] = searched_range();
  return std::isfinite(lo) ? observed_quant_params(lo, hi, quant_max) : QuantParams{};
}

}  // namespace convlab
