// The observers calibration uses to choose an activation's quint8 parameters from the values it
// sees, batch by batch, as PyTorch's torch.ao.quantization observers (1.13) do:
//   minmax     MinMaxObserver: the whole observed range (widened to include 0).
//   histogram  HistogramObserver, the `onednn` qconfig's activation observer: a 2048-bin
//              histogram, merged across batches on a common finer grid, then the range that
//              approximately minimises the L2 error of quantising the histogram (a greedy search
//              that trims the tails a step of 1e-5 of the mass at a time and stops when the
//              error would grow). Outliers no longer stretch the scale.
// Where ours differs from PyTorch 1.13: its histc() receives the range cut to integers
// (`min=int(min_val)`), so values beyond them fall out of its histogram and the rest are binned
// over another range than the one it then assumes; ours bins over the real range. On a range
// whose ends are integers the two agree (tests/test_quantized_network.cpp checks one against
// PyTorch's numbers).
#pragma once

#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/common/quantize.hpp"

namespace convlab {

// The quint8 parameters of a range observed by calibration, as PyTorch's MinMaxObserver makes
// them: the range widened to include 0, scale = (max - min) / quant_max (at least FLT_EPSILON),
// zero point = -nearbyint(min / scale) in [0, quant_max]. quant_max is 255, or 127 for PyTorch's
// reduce_range: activations over 7 bits, so that u8 x s8 pairs cannot saturate vpmaddubsw
// (kernels/cpu/int8_simd.hpp), at half the levels.
inline constexpr std::int32_t kQuantMax = 255, kReducedQuantMax = 127;
QuantParams observed_quant_params(float min, float max, std::int32_t quant_max = kQuantMax);

enum class Observer { minmax, histogram };
std::string_view to_string(Observer o);

class MinMaxObserver {
 public:
  void observe(std::span<const float> values);
  QuantParams params(std::int32_t quant_max = kQuantMax) const;  // observed_quant_params over everything seen

 private:
  float min_ = 0, max_ = 0;  // the range starts at 0: it is widened to include 0 anyway
};

class HistogramObserver {
 public:
  static constexpr int kBins = 2048, kUpsample = 128, kQuantLevels = 256;
  void observe(std::span<const float> values);
  // The searched range's parameters. The search itself keeps 256 levels with reduce_range too, as
  // PyTorch's (its dst_nbins comes from the dtype).
  QuantParams params(std::int32_t quant_max = kQuantMax) const;
  // The range the search keeps, before it becomes scale and zero point (for tests).
  std::pair<float, float> searched_range() const;

 private:
  std::vector<double> histogram_ = std::vector<double>(kBins, 0.0);
  float min_ = std::numeric_limits<float>::infinity(), max_ = -std::numeric_limits<float>::infinity();
  double quantization_error(int start_bin, int end_bin) const;
};

}  // namespace convlab
