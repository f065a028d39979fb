#include "bench/pipeline/end_to_end.hpp"

#include <omp.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <new>

#include <fmt/format.h>

#include "bench/harness/stats.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

namespace fs = std::filesystem;

namespace {

// A private folder (mkdtemp) removed when the run has read what it needs from it, even on error.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "convlab_images_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw InputError("cannot create a temporary folder for the generated images");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

std::shared_ptr<const ImageSet> end_to_end_images(const std::string& dir, int channels, std::uint64_t seed) {
  if (!dir.empty()) return std::make_shared<const ImageSet>(load_images(dir, channels));
  const TempDir tmp;
  generate_images(tmp.path(), kGeneratedImages, kGeneratedWidth, kGeneratedHeight, seed);
  ImageSet set = load_images(tmp.path(), channels);
  set.source = fmt::format("generated: {} {}x{} JPEGs (seed {})", kGeneratedImages, kGeneratedWidth,
                           kGeneratedHeight, seed);
  for (EncodedImage& img : set.images) img.name = fs::path(img.name).filename().string();  // the folder is gone
  return std::make_shared<const ImageSet>(std::move(set));
}

EndToEndPass::EndToEndPass(const ImageSet& images, const Shape& item, std::span<float> input,
                           std::function<void()> forward)
    : images_(images), item_(item), input_(input), forward_(std::move(forward)),
      norm_(normalisation_for(static_cast<int>(item.c()))) {
  if (images.images.empty()) throw InputError("end-to-end: no images to decode");
  const std::size_t batch = input.size() / static_cast<std::size_t>(item.item_elems());
  decoded_.resize(batch);
  stage_ms_.reserve(4096);  // the timed loop should not grow it for ordinary protocols
}

void EndToEndPass::operator()() {
  const auto batch = static_cast<std::ptrdiff_t>(decoded_.size());
  const std::size_t count = images_.images.size(), first = next_;
  next_ = (next_ + decoded_.size()) % count;
  // Exceptions cannot leave an OpenMP region: the first one is kept and rethrown after it.
  bool out_of_memory = false;
  std::string error;
  const std::int64_t t0 = clock_.now_ns();
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t n = 0; n < batch; ++n) {
    try {
      decoded_[static_cast<std::size_t>(n)] =
          decode_image(images_.images[(first + static_cast<std::size_t>(n)) % count], static_cast<int>(item_.c()));
    } catch (const std::bad_alloc&) {
#pragma omp critical
      out_of_memory = true;
    } catch (const std::exception& e) {
#pragma omp critical
      error = e.what();
    }
  }
  if (out_of_memory) throw std::bad_alloc();
  if (!error.empty()) throw InputError(error);
  const std::int64_t t1 = clock_.now_ns();
  const auto elems = static_cast<std::size_t>(item_.item_elems());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t n = 0; n < batch; ++n) {
    const auto i = static_cast<std::size_t>(n);
    preprocess(decoded_[i], item_, norm_, input_.subspan(i * elems, elems));
    decoded_[i] = Image{};  // the pixels are not needed past this point
  }
  const std::int64_t t2 = clock_.now_ns();
  forward_();
  const std::int64_t t3 = clock_.now_ns();
  stage_ms_.push_back({(t1 - t0) * 1e-6, (t2 - t1) * 1e-6, (t3 - t2) * 1e-6});
}

StageTimes EndToEndPass::medians(std::size_t passes) const {
  passes = std::min(passes, stage_ms_.size());
  if (passes == 0) return {};
  std::array<std::vector<double>, 3> stage;
  for (std::size_t i = stage_ms_.size() - passes; i < stage_ms_.size(); ++i)
    for (std::size_t s = 0; s < 3; ++s) stage[s].push_back(stage_ms_[i][s]);
  return {summarize(stage[0]).p50, summarize(stage[1]).p50, summarize(stage[2]).p50};
}

}  // namespace convlab
