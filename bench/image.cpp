#include "bench/image.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <new>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

// The one place stb's implementations are compiled. Its code is not ours and trips -Wextra; the
// folder is included as SYSTEM (bench/CMakeLists.txt), which silences warnings from it alone.
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO  // every file is read into memory first; stb never touches the disk
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb_image.h>
#include <stb_image_write.h>

namespace convlab {

namespace fs = std::filesystem;

Image decode_image(const EncodedImage& file, int channels) {
  if (file.bytes.size() > static_cast<std::size_t>(INT32_MAX))
    throw InputError(fmt::format("image '{}' is too large to decode ({} bytes)", file.name, file.bytes.size()));
  Image img;
  int file_channels = 0;
  std::uint8_t* data = stbi_load_from_memory(file.bytes.data(), static_cast<int>(file.bytes.size()), &img.width,
                                             &img.height, &file_channels, channels);
  if (data == nullptr) {
    const std::string reason = stbi_failure_reason() ? stbi_failure_reason() : "unknown";
    if (reason == "outofmem") throw std::bad_alloc();
    throw InputError(fmt::format("'{}' is not an image stb_image can decode ({})", file.name, reason));
  }
  img.channels = channels;
  img.pixels = {data, [](std::uint8_t* p) { stbi_image_free(p); }};
  return img;
}

namespace {

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) throw InputError(fmt::format("cannot read image '{}'", path.string()));
  if (bytes.empty()) throw InputError(fmt::format("'{}' is empty, not an image", path.string()));
  return bytes;
}

}  // namespace

ImageSet load_images(const fs::path& dir, int channels) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(fmt::format("--images: '{}' is not a folder", dir.string()));
  std::vector<fs::path> paths;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().filename().string().rfind('.', 0) != 0) paths.push_back(e.path());
  if (ec) throw InputError(fmt::format("--images: cannot list '{}': {}", dir.string(), ec.message()));
  if (paths.empty()) throw InputError(fmt::format("--images: '{}' holds no image files", dir.string()));
  std::ranges::sort(paths);
  ImageSet set{.source = fmt::format("{} ({} files)", dir.string(), paths.size())};
  for (const fs::path& p : paths) {
    set.images.push_back({p.string(), read_bytes(p)});
    decode_image(set.images.back(), channels);  // a bad file fails now, not in the middle of timing
  }
  return set;
}

void write_png(const fs::path& path, int width, int height, std::span<const std::uint8_t> rgb) {
  if (stbi_write_png(path.c_str(), width, height, 3, rgb.data(), width * 3) == 0)
    throw InputError(fmt::format("cannot write '{}'", path.string()));
}

void write_jpeg(const fs::path& path, int width, int height, std::span<const std::uint8_t> rgb, int quality) {
  if (stbi_write_jpg(path.c_str(), width, height, 3, rgb.data(), quality) == 0)
    throw InputError(fmt::format("cannot write '{}'", path.string()));
}

void generate_images(const fs::path& dir, int count, int width, int height, std::uint64_t seed) {
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  for (int i = 0; i < count; ++i) {
    // A small LCG: deterministic across platforms, unlike the <random> distributions.
    std::uint64_t state = seed * 6364136223846793005ULL + static_cast<std::uint64_t>(i) * 1442695040888963407ULL + 1;
    const auto next = [&state] {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(state >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    };
    const double cx = next() * width, cy = next() * height, radius = (0.1 + 0.3 * next()) * height;
    const double tint[3] = {next(), next(), next()};
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        const bool inside = std::hypot(x - cx, y - cy) < radius;
        const double noise = 24.0 * (next() - 0.5);
        for (int c = 0; c < 3; ++c) {
          const double gradient = 255.0 * (c == 0 ? double(x) / width : c == 1 ? double(y) / height : tint[c]);
          const double v = (inside ? 255.0 * tint[c] : gradient) + noise;
          rgb[(static_cast<std::size_t>(y) * width + x) * 3 + c] = static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
        }
      }
    write_jpeg(dir / fmt::format("image_{:03}.jpg", i), width, height, rgb, 90);
  }
}

}  // namespace convlab
