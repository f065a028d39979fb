// Images for the end-to-end pipeline: encoded files (PNG, JPEG, PPM, ... whatever stb_image
// reads), their decoding, and a deterministic generated set for runs without a folder of images.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace convlab {

// One encoded file, read into memory before any timing: the pipeline studies decoding, not disk.
struct EncodedImage {
  std::string name;  // the file's path, for error messages
  std::vector<std::uint8_t> bytes;
};

// What a run decodes, in order; a batch of n takes the next n, wrapping around.
struct ImageSet {
  std::string source;  // "DIR (N files)" or "generated: N 640x480 JPEGs", for the report
  std::vector<EncodedImage> images;
};

// Decoded pixels, interleaved (HWC), 8 bits per channel.
struct Image {
  int width = 0, height = 0, channels = 0;
  std::unique_ptr<std::uint8_t[], void (*)(std::uint8_t*)> pixels{nullptr, nullptr};
  std::uint8_t at(int y, int x, int c) const {
    return pixels[(static_cast<std::size_t>(y) * width + x) * channels + c];
  }
};

// The most pixels decode_image accepts (64 MP, above any phone photo). A header is read before the
// pixels: a 40-byte TGA may claim 65535x2610 pixels, which stb_image would otherwise decode from
// zeros for seconds (found by fuzz_image) and which no lab image needs.
inline constexpr std::int64_t kMaxImagePixels = std::int64_t{1} << 26;

// Decodes to `channels` channels (1: grey, 3: RGB; stb_image converts). Throws InputError naming
// the file and stb_image's reason when it is not an image it reads, or when its header claims
// more than max_pixels pixels.
Image decode_image(const EncodedImage& file, int channels, std::int64_t max_pixels = kMaxImagePixels);

// Every regular, non-hidden file in `dir`, sorted by name, read and decoded once to check it.
// Throws InputError for a missing or empty folder, an unreadable file or one that is not an image.
ImageSet load_images(const std::filesystem::path& dir, int channels);

// Writes `count` deterministic width x height JPEGs (quality 90) into `dir` as image_NNN.jpg:
// smooth gradients, discs and a little noise, a mix that costs a JPEG decoder about what a photo
// of that size does. The same seed gives the same files.
void generate_images(const std::filesystem::path& dir, int count, int width, int height, std::uint64_t seed);

// Encoders for the tests and the generator (stb_image_write). Throw InputError when writing fails.
void write_png(const std::filesystem::path& path, int width, int height, std::span<const std::uint8_t> rgb);
void write_jpeg(const std::filesystem::path& path, int width, int height, std::span<const std::uint8_t> rgb, int quality);

}  // namespace convlab
