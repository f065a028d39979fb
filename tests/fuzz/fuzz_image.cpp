// libFuzzer target: the end-to-end pipeline's image path (bench/pipeline/image.cpp: stb_image decoding;
// bench/pipeline/preprocess.cpp: resize, normalise, pack). Bytes that are not an image must end in
// InputError; a decoded image must preprocess into finite values for a 3x32x32 network input.
// Images are capped at 1 MP here: decoding a 64 MP one (the product's cap) from a few bytes is
// correct but takes seconds under ASan, past libFuzzer's per-input timeout.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "bench/pipeline/image.hpp"
#include "bench/pipeline/preprocess.hpp"
#include "kernels/common/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const convlab::EncodedImage file{"fuzz", std::vector<std::uint8_t>(data, data + size)};
  for (const int channels : {1, 3}) {
    convlab::Image image;
    try {
      image = convlab::decode_image(file, channels, std::int64_t{1} << 20);
    } catch (const convlab::InputError&) {
      return 0;
    }
    if (image.width < 1 || image.height < 1 || image.channels != channels) std::abort();
    const convlab::Shape item = convlab::nchw(1, channels, 32, 32);
    std::vector<float> out(static_cast<std::size_t>(item.elems()));
    convlab::preprocess(image, item, convlab::normalisation_for(channels), out);
    for (const float v : out)
      if (!std::isfinite(v)) std::abort();
  }
  return 0;
}
