#include "bench/pipeline/preprocess.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

Normalisation normalisation_for(int channels) {
  if (channels == 3) return {{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  if (channels == 1) return {{0.1307f}, {0.3081f}};
  return {std::vector<float>(static_cast<std::size_t>(channels), 0.5f),
          std::vector<float>(static_cast<std::size_t>(channels), 0.5f)};
}

namespace {

// Where output coordinate i (of n) samples the input (of m): the two neighbours and the weight of
// the second, with half-pixel centres and clamping at the borders.
struct Tap {
  int lo, hi;
  float frac;
};

std::vector<Tap> taps(int n, int m) {
  std::vector<Tap> t(static_cast<std::size_t>(n));
  const double scale = static_cast<double>(m) / n;
  for (int i = 0; i < n; ++i) {
    const double src = std::clamp((i + 0.5) * scale - 0.5, 0.0, static_cast<double>(m - 1));
    const int lo = static_cast<int>(src);
    t[static_cast<std::size_t>(i)] = {lo, std::min(lo + 1, m - 1), static_cast<float>(src - lo)};
  }
  return t;
}

}  // namespace

std::vector<float> preprocess_all(const ImageSet& images, const Shape& item) {
  const auto elems = static_cast<std::size_t>(item.item_elems());
  std::vector<float> out(images.images.size() * elems);
  const Normalisation norm = normalisation_for(static_cast<int>(item.c()));
  for (std::size_t i = 0; i < images.images.size(); ++i)
    preprocess(decode_image(images.images[i], static_cast<int>(item.c())), item, norm, std::span(out).subspan(i * elems, elems));
  return out;
}

void preprocess(const Image& image, const Shape& item, const Normalisation& norm, std::span<float> out) {
  const int c_n = static_cast<int>(item.c()), h_n = static_cast<int>(item.h()), w_n = static_cast<int>(item.w());
  if (image.channels != c_n || static_cast<int>(norm.mean.size()) != c_n || static_cast<int>(norm.std.size()) != c_n)
    throw InputError(fmt::format("preprocess: the image has {} channels, the network takes {}", image.channels, c_n));
  if (out.size() != static_cast<std::size_t>(item.item_elems()))
    throw InputError(fmt::format("preprocess: output holds {} floats, the item needs {}", out.size(), item.item_elems()));
  const std::vector<Tap> ys = taps(h_n, image.height), xs = taps(w_n, image.width);
  for (int c = 0; c < c_n; ++c) {
    // (x / 255 - mean) / std as one multiply-add per pixel.
    const float scale = 1.0f / (255.0f * norm.std[c]), shift = -norm.mean[c] / norm.std[c];
    float* plane = out.data() + static_cast<std::size_t>(c) * h_n * w_n;
    for (int y = 0; y < h_n; ++y) {
      const Tap ty = ys[static_cast<std::size_t>(y)];
      for (int x = 0; x < w_n; ++x) {
        const Tap tx = xs[static_cast<std::size_t>(x)];
        const float top = image.at(ty.lo, tx.lo, c) + tx.frac * (image.at(ty.lo, tx.hi, c) - image.at(ty.lo, tx.lo, c));
        const float bottom = image.at(ty.hi, tx.lo, c) + tx.frac * (image.at(ty.hi, tx.hi, c) - image.at(ty.hi, tx.lo, c));
        plane[static_cast<std::size_t>(y) * w_n + x] = (top + ty.frac * (bottom - top)) * scale + shift;
      }
    }
  }
}

}  // namespace convlab
