#include "bench/pipeline/image.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <new>
#include <span>

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

namespace {

// Debian 12's stb_image (git 2022-09-08) trusts a JPEG's tables in two ways that corrupt memory
// (both found by fuzz_image; later stb versions check the first):
// - it builds a Huffman table without checking that its 16 code-length counts add up to at most
//   256 symbols, and writes past a 257-entry array when they do;
// - it decodes a scan with whatever Huffman table the scan names, even one no DHT segment defined:
//   its decoder state is malloc'd, not zeroed, so an undefined table is heap garbage and its
//   lookups read out of bounds (which bytes depends on the heap, so the crash comes and goes).
// So every marker segment is walked here first. The same walk refuses a scan whose components
// use a quantization table no DQT defined (stb would multiply by garbage). Returns why the JPEG is
// refused, or "" (also for what is not a JPEG at all: the decoder judges the rest).
std::string bad_jpeg_tables(std::span<const std::uint8_t> b) {
  if (b.size() < 4 || b[0] != 0xFF || b[1] != 0xD8) return {};
  unsigned huffman_defined[2] = {0, 0};  // bit n: table n of class 0 (DC) or 1 (AC) defined
  unsigned quant_defined = 0;
  bool huffman_frame = false, progressive = false;  // stb decodes the Huffman-coded SOF0-SOF2 only
  std::uint8_t quant_of[256] = {};  // component id -> quantization table, from the frame header
  bool in_frame[256] = {};
  std::size_t i = 2;
  while (i + 4 <= b.size()) {
    if (b[i] != 0xFF) {  // entropy-coded data after a scan: skip to the next marker
      ++i;
      continue;
    }
    const std::uint8_t marker = b[i + 1];
    if (marker == 0x00 || marker == 0xFF || (marker >= 0xD0 && marker <= 0xD8) || marker == 0x01) {
      i += marker == 0xFF ? 1 : 2;  // stuffed byte, fill byte, restart or standalone marker
      continue;
    }
    if (marker == 0xD9) return {};  // end of image
    const std::size_t length = static_cast<std::size_t>(b[i + 2]) << 8 | b[i + 3];
    const std::size_t end = std::min(b.size(), i + 2 + length);
    const std::size_t body = i + 4;
    if (marker == 0xC4) {  // DHT: tables of (class/id, 16 counts, that many symbols)
      for (std::size_t t = body; t + 17 <= end;) {
        std::size_t symbols = 0;
        for (std::size_t k = 1; k <= 16; ++k) symbols += b[t + k];
        if (symbols > 256) return fmt::format("a Huffman table of {} symbols (at most 256)", symbols);
        if (const int tc = b[t] >> 4, th = b[t] & 15; tc <= 1 && th <= 3) huffman_defined[tc] |= 1u << th;
        t += 17 + symbols;
      }
    } else if (marker == 0xDB) {  // DQT: tables of (precision/id, 64 or 128 bytes)
      for (std::size_t t = body; t < end;) {
        if (const int tq = b[t] & 15; tq <= 3) quant_defined |= 1u << tq;
        t += 1 + ((b[t] >> 4) != 0 ? 128 : 64);
      }
    } else if (marker >= 0xC0 && marker <= 0xC2) {  // SOF: precision, height, width, components
      huffman_frame = true;
      progressive = marker == 0xC2;
      if (body + 6 <= end)
        for (std::size_t c = 0, t = body + 6; c < b[body + 5] && t + 3 <= end; ++c, t += 3) {
          in_frame[b[t]] = true;
          quant_of[b[t]] = b[t + 2];
        }
    } else if (marker == 0xDA && body + 1 <= end) {  // SOS: components (id, DC/AC table), Ss, Se, Ah/Al
      const std::size_t n = b[body], tail = body + 1 + 2 * n;
      if (!huffman_frame || tail + 3 > end) return {};  // stb refuses these itself
      const int spectral_start = b[tail], successive_high = b[tail + 2] >> 4;
      // A sequential scan decodes with both tables; a progressive one with the DC table in a
      // first DC scan, with the AC table in an AC scan.
      const bool uses_dc = !progressive || (spectral_start == 0 && successive_high == 0);
      const bool uses_ac = !progressive || spectral_start != 0;
      for (std::size_t c = 0; c < n; ++c) {
        const std::uint8_t id = b[body + 1 + 2 * c], dc = b[body + 2 + 2 * c] >> 4, ac = b[body + 2 + 2 * c] & 15;
        if (uses_dc && dc <= 3 && !(huffman_defined[0] >> dc & 1))
          return fmt::format("a scan uses DC Huffman table {}, which no DHT defines", dc);
        if (uses_ac && ac <= 3 && !(huffman_defined[1] >> ac & 1))
          return fmt::format("a scan uses AC Huffman table {}, which no DHT defines", ac);
        if (in_frame[id] && quant_of[id] <= 3 && !(quant_defined >> quant_of[id] & 1))
          return fmt::format("a scan uses quantization table {}, which no DQT defines", quant_of[id]);
      }
    }
    i = std::max(end, i + 2);
  }
  return {};
}

// The same stb_image reads a PNM header number into an int without an overflow check (undefined
// behaviour past 2^31; found by fuzz_image): header numbers of more than 9 digits are refused.
std::string bad_pnm_header(std::span<const std::uint8_t> b) {
  if (b.size() < 2 || b[0] != 'P' || (b[1] != '5' && b[1] != '6')) return {};
  std::size_t digits = 0;
  for (std::size_t i = 2, fields = 0; i < b.size() && fields < 3; ++i) {  // width, height, maxval
    const bool digit = b[i] >= '0' && b[i] <= '9';
    if (digit && ++digits > 9) return "a header number of more than 9 digits";
    if (!digit && digits > 0) ++fields, digits = 0;
    if (b[i] == '#')
      while (i < b.size() && b[i] != '\n') ++i;  // a comment
  }
  return {};
}

// The same stb_image grows its buffer for a PNG's IDAT data to the length a chunk header claims
// before it reads the chunk (found by fuzz_image: 122 bytes whose last chunk claims 1.2 GB made it
// allocate 2 GB). A chunk cannot hold more bytes than the file has left, so each chunk's length
// is checked against the rest of the file first.
std::string bad_png_chunks(std::span<const std::uint8_t> b) {
  static constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() < 8 || !std::equal(kSignature, kSignature + 8, b.begin())) return {};
  for (std::size_t i = 8; i + 8 <= b.size();) {  // length (big-endian), type, data, CRC
    const std::size_t length = static_cast<std::size_t>(b[i]) << 24 | b[i + 1] << 16 | b[i + 2] << 8 | b[i + 3];
    const std::string type(b.begin() + static_cast<std::ptrdiff_t>(i) + 4, b.begin() + static_cast<std::ptrdiff_t>(i) + 8);
    if (length > b.size() - i - 8)
      return fmt::format("a chunk claims {} bytes where {} are left", length, b.size() - i - 8);
    if (type == "IEND") return {};
    i += 12 + length;
  }
  return {};
}

}  // namespace

Image decode_image(const EncodedImage& file, int channels, std::int64_t max_pixels) {
  if (file.bytes.size() > static_cast<std::size_t>(INT32_MAX))
    throw InputError(fmt::format("image '{}' is too large to decode ({} bytes)", file.name, file.bytes.size()));
  if (const std::string why = bad_jpeg_tables(file.bytes); !why.empty())
    throw InputError(fmt::format("'{}' is not an image convlab decodes: a corrupt JPEG ({})", file.name, why));
  if (const std::string why = bad_png_chunks(file.bytes); !why.empty())
    throw InputError(fmt::format("'{}' is not an image convlab decodes: a corrupt PNG ({})", file.name, why));
  if (const std::string why = bad_pnm_header(file.bytes); !why.empty())
    throw InputError(fmt::format("'{}' is not an image convlab decodes: a corrupt PNM ({})", file.name, why));
  // Its 16-to-8-bit conversion reads past the decoded buffer on some files (fuzz_image, under
  // ASan); the lab's images are 8-bit, so 16-bit ones are refused.
  if (stbi_is_16_bit_from_memory(file.bytes.data(), static_cast<int>(file.bytes.size())))
    throw InputError(fmt::format("'{}' is a 16-bit image: convlab decodes 8-bit images only", file.name));
  Image img;
  int file_channels = 0;
  if (stbi_info_from_memory(file.bytes.data(), static_cast<int>(file.bytes.size()), &img.width, &img.height,
                            &file_channels) &&
      static_cast<std::int64_t>(img.width) * img.height > max_pixels)
    throw InputError(fmt::format("'{}' claims {}x{} pixels, more than the {} convlab decodes", file.name, img.width,
                                 img.height, max_pixels));
  std::uint8_t* data = stbi_load_from_memory(file.bytes.data(), static_cast<int>(file.bytes.size()), &img.width,
                                             &img.height, &file_channels, channels);
  if (data == nullptr) {
    const std::string reason = stbi_failure_reason() ? stbi_failure_reason() : "unknown";
    if (reason == "outofmem") throw std::bad_alloc();
    throw InputError(fmt::format("'{}' is not an image stb_image can decode ({})", file.name, reason));
  }
  img.channels = channels;
  img.pixels = {data, [](std::uint8_t* p) { stbi_image_free(p); }};
  // stb_image accepts a PPM header whose size field is not a number as size 0 (found by
  // fuzz_image); an empty image would leave preprocessing nothing to sample.
  if (img.width < 1 || img.height < 1)
    throw InputError(fmt::format("'{}' decodes to an empty {}x{} image", file.name, img.width, img.height));
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
