// The end-to-end pipeline's pieces: decoding (PNG, JPEG, PPM; bad files), the deterministic image
// generator, bilinear resize + normalisation + NCHW packing, and one end-to-end pass.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/pipeline/end_to_end.hpp"
#include "bench/pipeline/image.hpp"
#include "bench/pipeline/preprocess.hpp"
#include "kernels/common/error.hpp"

using namespace convlab;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("convlab_preprocess_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Image make_image(int width, int height, int channels, const std::vector<std::uint8_t>& values) {
  Image img{.width = width, .height = height, .channels = channels};
  auto* data = new std::uint8_t[values.size()];
  std::copy(values.begin(), values.end(), data);
  img.pixels = {data, [](std::uint8_t* p) { delete[] p; }};
  return img;
}

std::vector<std::uint8_t> pattern(int width, int height) {  // RGB, every pixel different
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width) * height * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 7);
  return rgb;
}

void write_ppm(const fs::path& path, int width, int height, const std::vector<std::uint8_t>& rgb) {
  std::ofstream out(path, std::ios::binary);
  out << "P6\n" << width << ' ' << height << "\n255\n";
  out.write(reinterpret_cast<const char*>(rgb.data()), static_cast<std::streamsize>(rgb.size()));
}

}  // namespace

TEST_CASE("preprocess: an image of the network's size is only normalised, packed channel by channel") {
  const Image img = make_image(2, 2, 3, {0, 51, 255, 10, 20, 30, 255, 255, 255, 0, 0, 0});
  const Normalisation norm{{0.5f, 0.0f, 0.2f}, {0.5f, 1.0f, 0.25f}};
  std::vector<float> out(12);
  preprocess(img, nchw(1, 3, 2, 2), norm, out);
  // NCHW: out[c * 4 + y * 2 + x] = (pixel(y, x, c) / 255 - mean[c]) / std[c]
  CHECK(out[0] == doctest::Approx(-1.0));                     // c0 (0,0): 0
  CHECK(out[1] == doctest::Approx((10 / 255.0 - 0.5) / 0.5));  // c0 (0,1)
  CHECK(out[4 + 0] == doctest::Approx(51 / 255.0));           // c1 (0,0)
  CHECK(out[8 + 2] == doctest::Approx((1.0 - 0.2) / 0.25));   // c2 (1,0): 255
  CHECK(out[8 + 3] == doctest::Approx(-0.2 / 0.25));          // c2 (1,1): 0
}

TEST_CASE("preprocess: bilinear with half-pixel centres, clamped at the borders") {
  const Image img = make_image(2, 1, 1, {0, 255});
  std::vector<float> out(4);
  preprocess(img, nchw(1, 1, 1, 4), Normalisation{{0.0f}, {1.0f}}, out);
  // Output x samples input x = (x + 0.5) / 2 - 0.5: -0.25 (clamped to 0), 0.25, 0.75, 1.25 (to 1).
  CHECK(out[0] == doctest::Approx(0.0));
  CHECK(out[1] == doctest::Approx(0.25));
  CHECK(out[2] == doctest::Approx(0.75));
  CHECK(out[3] == doctest::Approx(1.0));
  // Downscaling 4 -> 2 samples between pixels 0,1 and 2,3.
  const Image wide = make_image(4, 1, 1, {0, 100, 200, 250});
  std::vector<float> two(2);
  preprocess(wide, nchw(1, 1, 1, 2), Normalisation{{0.0f}, {1.0f / 255.0f}}, two);
  CHECK(two[0] == doctest::Approx(50.0));
  CHECK(two[1] == doctest::Approx(225.0));
  std::vector<float> rgb_item(12);  // a 3-channel network, a grey image
  CHECK_THROWS_AS(preprocess(img, nchw(1, 3, 1, 4), normalisation_for(3), rgb_item), InputError);
}

TEST_CASE("preprocess: ImageNet constants for RGB models, MNIST's for grey ones") {
  CHECK(normalisation_for(3).mean == std::vector<float>{0.485f, 0.456f, 0.406f});
  CHECK(normalisation_for(3).std == std::vector<float>{0.229f, 0.224f, 0.225f});
  CHECK(normalisation_for(1).mean == std::vector<float>{0.1307f});
  CHECK(normalisation_for(2).std.size() == 2);
}

TEST_CASE("images: PNG, JPEG and PPM decode, a folder loads sorted, bad folders and files are input errors") {
  const fs::path dir = fresh_dir("formats");
  const std::vector<std::uint8_t> rgb = pattern(6, 4);
  write_png(dir / "b.png", 6, 4, rgb);
  write_jpeg(dir / "a.jpg", 6, 4, rgb, 95);
  write_ppm(dir / "c.ppm", 6, 4, rgb);
  std::ofstream(dir / ".hidden") << "not looked at";
  const ImageSet set = load_images(dir, 3);
  REQUIRE(set.images.size() == 3);
  CHECK(fs::path(set.images[0].name).filename() == "a.jpg");
  CHECK(fs::path(set.images[2].name).filename() == "c.ppm");
  const Image png = decode_image(set.images[1], 3), ppm = decode_image(set.images[2], 3);
  CHECK(png.width == 6);
  CHECK(png.height == 4);
  CHECK(png.at(3, 5, 2) == rgb.back());  // lossless formats give the pixels back
  CHECK(ppm.at(1, 2, 0) == rgb[(1 * 6 + 2) * 3]);
  CHECK(decode_image(set.images[0], 1).channels == 1);  // grey for 1-channel models

  std::ofstream(dir / "d.jpg") << "this is not a JPEG";
  CHECK_THROWS_WITH_AS(load_images(dir, 3), doctest::Contains("d.jpg' is not an image"), InputError);
  CHECK_THROWS_WITH_AS(load_images(fresh_dir("empty"), 3), doctest::Contains("holds no image files"), InputError);
  CHECK_THROWS_WITH_AS(load_images(dir / "missing", 3), doctest::Contains("is not a folder"), InputError);
  const fs::path zero = fresh_dir("zero");
  std::ofstream(zero / "z.png");
  CHECK_THROWS_WITH_AS(load_images(zero, 3), doctest::Contains("is empty"), InputError);
  // fuzz_image's find: a PPM whose height is not a number decodes to a 3x0 image in stb_image.
  const std::string ppm_bad = "P6\n3 /\n255\n";
  const EncodedImage empty_ppm{"bad.ppm", std::vector<std::uint8_t>(ppm_bad.begin(), ppm_bad.end())};
  CHECK_THROWS_WITH_AS(decode_image(empty_ppm, 3), doctest::Contains("decodes to an empty 3x0 image"), InputError);
}

TEST_CASE("images: files that would trip Debian's stb_image are refused before decoding (fuzz_image's finds)") {
  const auto encoded = [](std::vector<std::uint8_t> bytes) { return EncodedImage{"x", std::move(bytes)}; };
  // A JPEG Huffman table whose 16 counts add up to 257 symbols: stb writes past a 257-entry array.
  std::vector<std::uint8_t> jpeg = {0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x13, 0x00};
  for (int k = 0; k < 16; ++k) jpeg.push_back(k == 15 ? 17 : 16);  // 15 x 16 + 17 = 257
  CHECK_THROWS_WITH_AS(decode_image(encoded(jpeg), 3), doctest::Contains("a Huffman table of 257 symbols"), InputError);
  // A scan that names Huffman or quantization tables no segment defined: stb would look codes up in
  // uninitialised heap memory (fuzz_image's find, which crashed only with some heap layouts).
  const std::vector<std::uint8_t> sof = {0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01, 0x11, 0x00};
  const std::vector<std::uint8_t> sos = {0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00, 0x00, 0xFF, 0xD9};
  std::vector<std::uint8_t> dqt(5 + 64, 1);  // quantization table 0: 64 ones
  std::ranges::copy(std::vector<std::uint8_t>{0xFF, 0xDB, 0x00, 0x43, 0x00}, dqt.begin());
  std::vector<std::uint8_t> dht = {0xFF, 0xC4, 0x00, 0x14, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00};
  const auto concat = [](std::initializer_list<std::vector<std::uint8_t>> parts) {
    std::vector<std::uint8_t> all = {0xFF, 0xD8};
    for (const auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
  };
  CHECK_THROWS_WITH_AS(decode_image(encoded(concat({dqt, sof, sos})), 3),
                       doctest::Contains("DC Huffman table 0, which no DHT defines"), InputError);
  CHECK_THROWS_WITH_AS(decode_image(encoded(concat({dqt, dht, sof, sos})), 3),
                       doctest::Contains("AC Huffman table 0, which no DHT defines"), InputError);
  std::vector<std::uint8_t> dht_ac = dht;
  dht_ac[4] = 0x10;  // the same one-symbol table, as AC table 0
  CHECK_THROWS_WITH_AS(decode_image(encoded(concat({dht, dht_ac, sof, sos})), 3),
                       doctest::Contains("quantization table 0, which no DQT defines"), InputError);
  // With every table defined the walk lets it through, and stb decodes the (empty) scan as 8x8.
  CHECK(decode_image(encoded(concat({dqt, dht, dht_ac, sof, sos})), 3).width == 8);
  // A PNG chunk that claims more bytes than the file has left: stb would grow its buffer to the
  // claim first (fuzz_image's find: 1.2 GB claimed, 2 GB allocated). Its chunks, as found.
  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  const auto chunk = [&png](std::uint32_t length, const char* type, std::size_t data) {
    for (int shift = 24; shift >= 0; shift -= 8) png.push_back(static_cast<std::uint8_t>(length >> shift));
    png.insert(png.end(), type, type + 4);
    png.insert(png.end(), data + 4, 0);  // the data (zeros here) and a CRC stb does not check
  };
  chunk(13, "IHDR", 13);
  png[16 + 3] = 4, png[20 + 2] = 0x80, png[20 + 3] = 4, png[24] = 8, png[25] = 2;  // 4 x 32772, 8-bit RGB
  chunk(0x49000039, "IDAT", 0);
  png.resize(png.size() - 4);  // nothing after the header: not even the CRC
  CHECK_THROWS_WITH_AS(decode_image(encoded(png), 3), doctest::Contains("a chunk claims 1224736825 bytes where 0 are left"),
                       InputError);
  // A PNM header number too long for an int: stb's parser overflows.
  const std::string pnm = "P6\n2544444444444 2\n255\n";
  CHECK_THROWS_WITH_AS(decode_image(encoded({pnm.begin(), pnm.end()}), 3), doctest::Contains("more than 9 digits"),
                       InputError);
  // A 16-bit image: stb's 16-to-8-bit conversion can read past its buffer.
  std::string pgm16 = "P5\n1 1\n65535\n";
  pgm16 += std::string("\x12\x34", 2);
  CHECK_THROWS_WITH_AS(decode_image(encoded({pgm16.begin(), pgm16.end()}), 1), doctest::Contains("16-bit image"),
                       InputError);
  // A 32-byte RLE TGA whose header claims 65535x2610 pixels: stb decodes it from zeros, for seconds.
  const std::vector<std::uint8_t> tga = {0xfd, 0x00, 0x0a, 0x33, 0x20, 0x0b, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0x32, 0x0a, 0x20, 0x1a, 0x00, 0x00, 0x00, 0x00,
                                         0x00, 0x00, 0x00, 0x0d, 0x35, 0x00, 0x00, 0x00, 0x04, 0xaa};
  CHECK_THROWS_WITH_AS(decode_image(encoded(tga), 3), doctest::Contains("more than the 67108864 convlab decodes"),
                       InputError);
  // The cap is the caller's: a 6x4 PPM passes at 24 pixels and is refused at 23.
  std::string ppm = "P6\n6 4\n255\n" + std::string(6 * 4 * 3, '\x40');
  CHECK(decode_image(encoded({ppm.begin(), ppm.end()}), 3, 24).width == 6);
  CHECK_THROWS_WITH_AS(decode_image(encoded({ppm.begin(), ppm.end()}), 3, 23), doctest::Contains("claims 6x4 pixels"),
                       InputError);
}

TEST_CASE("images: the generator is deterministic, and its images decode at the size asked") {
  const fs::path a = fresh_dir("gen_a"), b = fresh_dir("gen_b"), c = fresh_dir("gen_c");
  generate_images(a, 2, 64, 48, 7);
  generate_images(b, 2, 64, 48, 7);
  generate_images(c, 2, 64, 48, 8);
  const ImageSet sa = load_images(a, 3), sb = load_images(b, 3), sc = load_images(c, 3);
  REQUIRE(sa.images.size() == 2);
  CHECK(sa.images[1].bytes == sb.images[1].bytes);
  CHECK(sa.images[1].bytes != sc.images[1].bytes);
  CHECK(sa.images[0].bytes != sa.images[1].bytes);
  const Image img = decode_image(sa.images[0], 3);
  CHECK(img.width == 64);
  CHECK(img.height == 48);
}

TEST_CASE("end-to-end: a pass fills each batch item with the next image, preprocessed, then runs the forward") {
  const fs::path dir = fresh_dir("pass");
  write_png(dir / "0.png", 6, 4, pattern(6, 4));
  std::vector<std::uint8_t> other = pattern(6, 4);
  for (auto& v : other) v = static_cast<std::uint8_t>(255 - v);
  write_png(dir / "1.png", 6, 4, other);
  const ImageSet set = load_images(dir, 3);
  const Shape item = nchw(1, 3, 3, 5);
  std::vector<float> input(3 * 45);
  int forwards = 0;
  EndToEndPass pass(set, item, input, [&forwards] { ++forwards; });
  pass();  // items: image 0, 1, 0
  CHECK(forwards == 1);
  std::vector<float> want(45);
  for (int n = 0; n < 3; ++n) {
    preprocess(decode_image(set.images[n % 2], 3), item, normalisation_for(3), want);
    CHECK(std::equal(want.begin(), want.end(), input.begin() + n * 45));
  }
  pass();  // wraps on: image 1, 0, 1
  preprocess(decode_image(set.images[1], 3), item, normalisation_for(3), want);
  CHECK(std::equal(want.begin(), want.end(), input.begin()));
  const StageTimes t = pass.medians(2);
  CHECK(t.decode_ms > 0);
  CHECK(t.preprocess_ms > 0);
  CHECK(t.forward_ms >= 0);
  CHECK(t.sum_ms() == doctest::Approx(t.decode_ms + t.preprocess_ms + t.forward_ms));
}
