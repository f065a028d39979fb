// The end-to-end pass: decode a batch of images, preprocess them into the network's input, run
// the forward. The harness times each whole pass; the pass times its three stages itself, so the
// row reports the sum and the breakdown of one and the same run.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/harness/clock.hpp"
#include "bench/pipeline/image.hpp"
#include "bench/pipeline/preprocess.hpp"
#include "bench/report/results.hpp"

namespace convlab {

// Without --images: this many generated images of a camera's VGA size, cycled through.
inline constexpr int kGeneratedImages = 16, kGeneratedWidth = 640, kGeneratedHeight = 480;

// The images of an end-to-end run, decoded to `channels`: those in `dir`, or, when `dir` is empty,
// kGeneratedImages JPEGs generated from `seed` into a temporary folder, read back and the folder
// removed. Throws InputError for a bad folder or file (bench/pipeline/image.hpp).
std::shared_ptr<const ImageSet> end_to_end_images(const std::string& dir, int channels, std::uint64_t seed);

class EndToEndPass {
 public:
  // `input` is the network's input, batch x item floats; `forward` runs the network on it. Each
  // pass takes the next `batch` images of `images`, wrapping around. Images are decoded, then
  // preprocessed, each stage in parallel over the batch (OpenMP), as a serving pipeline would.
  EndToEndPass(const ImageSet& images, const Shape& item, std::span<float> input, std::function<void()> forward);

  void operator()();  // one pass; throws std::bad_alloc when a decoded batch does not fit

  // The medians of each stage over the last `passes` passes (the harness's trials come last).
  StageTimes medians(std::size_t passes) const;

 private:
  const ImageSet& images_;
  Shape item_;
  std::span<float> input_;
  std::function<void()> forward_;
  Normalisation norm_;
  std::vector<Image> decoded_;  // one per batch item, reused across passes
  std::size_t next_ = 0;        // the first image of the next pass
  std::vector<std::array<double, 3>> stage_ms_;  // decode, preprocess, forward, every pass
  SteadyClock clock_;
};

}  // namespace convlab
