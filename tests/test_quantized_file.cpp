// The int8 interchange file (models/quantized_file.hpp): what convlab writes it reads back to the
// same model, byte for byte in the forward; anything that does not fit is refused by name.
#include <doctest/doctest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "bench/check/quantization_effect.hpp"
#include "bench/pipeline/image.hpp"
#include "cli_test_util.hpp"
#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/quantized_file.hpp"

using namespace convlab;
namespace fs = std::filesystem;

namespace {

std::vector<float> forward(const QuantizedNetwork& q, const std::vector<float>& inputs, std::int64_t batch) {
  Int8NetworkPlan plan(q, batch, "cpu.21_int8_direct_madd");
  std::ranges::copy(inputs, plan.input().data());
  plan.forward();
  return {plan.output().data(), plan.output().data() + plan.output().elems()};
}

}  // namespace

TEST_CASE("int8 file: every network survives a write and a read with the same forward, under PyTorch's names") {
  for (const ModelInfo& model : all_models()) {
    if (model.imagenet_size) continue;  // the same kinds of layer, at a size that keeps CI short
    CAPTURE(model.name);
    const Network net = model.build(seeded_weights(2));
    const QuantizedNetwork q(net, seeded_inputs(net, 8, 2, 1000), "calibration");
    const TensorFile written = quantized_tensors(q);
    const TensorFile read = parse_safetensors(serialize_safetensors(written), "q.safetensors");
    const QuantizedNetwork back = load_quantized(net, read, "q.safetensors");
    CHECK(back.source() == "file q.safetensors");
    CHECK(back.parameter_bytes() == q.parameter_bytes());
    const std::vector<float> inputs = seeded_inputs(net, 2, 2, 2000);
    CHECK(forward(back, inputs, 2) == forward(q, inputs, 2));
    CHECK(read.tensors.at("quant.zero_point").dtype == "I64");
  }
  const Network resnet = model_or_throw("resnet8").build(seeded_weights(2));
  const TensorFile f = quantized_tensors(QuantizedNetwork(resnet, seeded_inputs(resnet, 4, 2, 1000), "calibration"));
  CHECK(f.tensors.contains("layer1.0.add_relu.scale"));  // torchvision's quantizable ResNet's FloatFunctional
  CHECK(f.tensors.at("fc.weight").dtype == "I8");
  CHECK(f.tensors.at("fc.weight").shape == std::vector<std::int64_t>{10, 64});
  CHECK(f.tensors.at("layer2.0.conv1.weight").shape == std::vector<std::int64_t>{32, 16, 3, 3});
}

TEST_CASE("int8 file: a missing or extra name, a wrong dtype or shape, a bad scale or zero point is refused by name") {
  const Network net = model_or_throw("lab-cnn").build(seeded_weights(2));
  const TensorFile good = quantized_tensors(QuantizedNetwork(net, seeded_inputs(net, 4, 2, 1000), "calibration"));
  auto refused = [&](const std::function<void(TensorFile&)>& damage, const char* message) {
    TensorFile bad = good;
    damage(bad);
    CHECK_THROWS_WITH_AS(load_quantized(net, bad, "q.safetensors"), doctest::Contains(message), InputError);
  };
  refused([](TensorFile& f) { f.tensors.erase("conv2.weight_scale"); }, "q.safetensors: tensor 'conv2.weight_scale' is missing");
  refused([](TensorFile& f) { f.tensors["conv9.weight"] = f.tensors.at("conv1.weight"); },
          "tensor 'conv9.weight' is not a tensor of this network's int8 model");
  refused([](TensorFile& f) { f.tensors.at("conv1.weight").dtype = "I32"; }, "tensor 'conv1.weight' has dtype I32, not I8");
  refused([](TensorFile& f) { f.tensors.at("fc.bias").shape = {11}; }, "tensor 'fc.bias' has shape [11], the network needs [10]");
  refused([](TensorFile& f) { f.tensors.at("conv1.zero_point").integers = {300}; }, "'conv1.zero_point' 300 is outside [0, 255]");
  refused([](TensorFile& f) { f.tensors.at("quant.scale").values = {-1.0f}; }, "'quant.scale' -1 must be finite and positive");
  refused([](TensorFile& f) { f.tensors.at("conv3.weight_scale").values[2] = 0.0f; }, "'conv3.weight_scale' [2] = 0");
  refused([](TensorFile& f) { f.tensors["conv1.weight_zero_point"] = {.dtype = "I64", .shape = {1}, .integers = {3}}; },
          "weights must be symmetric");
  TensorFile zero_points = good;  // an all-zero weight zero point, as PyTorch may store it, is fine
  zero_points.tensors["conv1.weight_zero_point"] = {.dtype = "I64", .shape = {16}, .integers = std::vector<std::int64_t>(16, 0)};
  CHECK_NOTHROW(load_quantized(net, zero_points, "q.safetensors"));
}

TEST_CASE("cli: quantize writes the int8 file that run --quantized then runs, and says where the quantisation came from") {
  const fs::path dir = test::scratch();
  const std::string file = (dir / "q.safetensors").string();
  const test::Outcome q = test::run_convlab("quantize --model resnet8 --calibration 4 -o " + file);
  REQUIRE_MESSAGE(q.code == 0, q.err);
  CHECK(q.out.find("written to " + file) != std::string::npos);
  const test::Outcome r = test::run_convlab("run --model resnet8 --precision int8 --quantized " + file +
                                            " --kernel cpu.21_int8_direct_madd --batch 1 --warmup 0 --trials 2 --eval-inputs 4");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("quantisation: file " + file) != std::string::npos);
  test::check_usage_error("quantize --model resnet8", "quantize needs -o FILE");
  test::check_usage_error("run --model lenet5 --precision int8 --quantized " + file,
                          file + ": tensor 'conv1.weight' has shape [16, 3, 3, 3], the network needs [6, 1, 5, 5]");
  test::check_usage_error("run --model resnet8 --quantized " + file, "--quantized: applies to --precision int8");

  const test::Outcome h = test::run_convlab("quantize --model resnet8 --calibration 4 --observer histogram -o " + file);
  REQUIRE_MESSAGE(h.code == 0, h.err);
  CHECK(h.out.find("histogram calibration on 4 seeded inputs") != std::string::npos);
  CHECK(read_safetensors(file).metadata.at("source") == "histogram calibration on 4 seeded inputs");
  // Real images instead of seeded inputs: each decoded, resized and normalised as the pipeline does.
  const fs::path images = dir / "calibration-images";
  fs::create_directories(images);
  convlab::generate_images(images, 3, 64, 48, 5);
  const test::Outcome i = test::run_convlab("quantize --model resnet8 --images " + images.string() + " -o " + file);
  REQUIRE_MESSAGE(i.code == 0, i.err);
  CHECK(i.out.find("min/max calibration on 3 images of " + images.string()) != std::string::npos);
  test::check_usage_error("quantize --model resnet8 --calibration 4 --images " + images.string() + " -o " + file,
                          "--calibration and --images: calibrate on seeded inputs or on the images, not both");
  test::check_usage_error("quantize --model resnet8 --images /nonexistent-dir -o " + file, "'/nonexistent-dir' is not a folder");
  test::check_usage_error("quantize --model resnet8 --observer percentile -o " + file,
                          "--observer: 'percentile' is not one of minmax, histogram");
  test::check_usage_error("run --model resnet8 --precision int8 --observer entropy",
                          "--observer: 'entropy' is not one of minmax, histogram");

  // --reduce-range: 7-bit activations, said in the file's source; every zero point under 128.
  const test::Outcome reduced = test::run_convlab("quantize --model resnet8 --calibration 4 --reduce-range -o " + file);
  REQUIRE_MESSAGE(reduced.code == 0, reduced.err);
  const TensorFile rf = read_safetensors(file);
  CHECK(rf.metadata.at("source") == "min/max (7-bit activations, reduce_range) calibration on 4 seeded inputs");
  int zero_points = 0;
  for (const auto& entry : rf.tensors) {
    const std::string& name = entry.first;  // not a structured binding: clang 14's CAPTURE cannot take one
    if (!name.ends_with(".zero_point") || name.ends_with("weight_zero_point")) continue;
    CAPTURE(name);
    ++zero_points;
    CHECK(entry.second.integers.at(0) <= 127);
  }
  CHECK(zero_points > 5);
  test::check_usage_error("run --model resnet8 --reduce-range", "--reduce-range: applies to --precision int8");
  test::check_usage_error("run --model resnet8 --precision int8 --reduce-range --quantized " + file,
                          "--reduce-range: applies to convlab's calibration, not to a --quantized file");
}

TEST_CASE("int8 file: damaged bytes are refused with InputError, never a crash (a seeded mutation sweep)") {
  // libFuzzer's build compiles only the parsers it fuzzes, and this loader needs a whole Network:
  // so the sweep runs here, under ASan and UBSan in CI's sanitized build.
  const Network net = model_or_throw("lab-cnn").build(seeded_weights(2));
  const std::string good = serialize_safetensors(quantized_tensors(QuantizedNetwork(net, seeded_inputs(net, 4, 2, 1000), "c")));
  std::mt19937 rng(18);
  int loaded = 0, refused = 0;
  for (int i = 0; i < 600; ++i) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[at] = static_cast<char>(rng()); break;   // a flipped byte, header or data
        case 1: bytes.resize(at); break;                         // truncated
        case 2: bytes.insert(at, 1, static_cast<char>(rng())); break;  // shifted
      }
      if (bytes.empty()) bytes.push_back('x');
    }
    try {
      load_quantized(net, parse_safetensors(bytes, "damaged"), "damaged");
      ++loaded;  // a flipped weight or scale byte can still be a valid model
    } catch (const InputError&) {
      ++refused;
    }
  }
  CHECK(refused > 300);
  CHECK(loaded + refused == 600);
}
