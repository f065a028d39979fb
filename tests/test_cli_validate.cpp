// `convlab validate`, `run --weights` and `run --per-layer` as a user meets them: exit 0 when all
// pass, 1 when a kernel fails, 2 (one line) for bad usage or a bad file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "models/safetensors.hpp"
#include "tests/cli_test_util.hpp"

using namespace convlab::test;

namespace {
const std::string kResnet = std::string(CONVLAB_TEST_DATA) + "/resnet8/";
const std::string kArgs = "validate --model resnet8 --threads 1 --weights " + kResnet + "weights.safetensors --input " +
                          kResnet + "b1/input.safetensors --expect " + kResnet + "b1/expect.safetensors";
}  // namespace

TEST_CASE("cli validate: the golden reference passes (exit 0) and the comparison is written as JSON") {
  const std::string json = (scratch() / "v.json").string();
  const Outcome o = run_convlab(kArgs + " --kernel cpu.00_reference --json " + json);
  CHECK_MESSAGE(o.code == 0, (o.out + o.err));
  CHECK(o.out.find("cpu.00_reference: PASS") != std::string::npos);
  CHECK(o.out.find("torch 1.13") != std::string::npos);
  const auto doc = nlohmann::json::parse(slurp(json));
  CHECK(doc["schema"] == "convlab-validate/1");
  CHECK(doc["pass"] == true);
  CHECK(doc["kernels"][0]["layers"].back()["layer"] == "output");
  CHECK(doc["kernels"][0]["layers"][0].contains("normalised_error"));
}

TEST_CASE("cli validate: corrupted weights fail (exit 1) and name the first diverging layer") {
  convlab::TensorFile w = convlab::read_safetensors(kResnet + "weights.safetensors");
  std::erase_if(w.tensors, [](const auto& t) { return !t.second.is_float(); });  // num_batches_tracked
  w.tensors.at("fc.weight").values[5] += 0.5f;
  const std::string bad = (scratch() / "bad.safetensors").string();
  convlab::write_safetensors(bad, w);
  const Outcome o = run_convlab("validate --model resnet8 --threads 1 --weights " + bad + " --input " + kResnet +
                                "b1/input.safetensors --expect " + kResnet + "b1/expect.safetensors");
  CHECK(o.code == 1);
  CHECK(o.out.find("FAIL") != std::string::npos);
  CHECK(o.out.find("first diverging layer: fc") != std::string::npos);
}

TEST_CASE("cli validate: bad usage and bad files exit 2 with one line") {
  check_usage_error("validate --model resnet8 --input x --expect y", "--weights: validating resnet8 needs the state_dict");
  check_usage_error(kArgs + " --kernel cpu.99_magic", "--kernel: unknown kernel 'cpu.99_magic' (choices: cpu.00_reference");
  check_usage_error(kArgs + " --backend tpu", "unknown backend 'tpu'");
  check_usage_error("validate --model lenet5 --weights " + kResnet + "weights.safetensors --input x --expect y",
                    "not a lenet5 state_dict: missing 'conv1.bias'");
  const std::string truncated = (scratch() / "t.safetensors").string();
  { std::ofstream(truncated) << "abc"; }
  check_usage_error("validate --model resnet8 --weights " + truncated + " --input x --expect y", "truncated: 3 bytes");
  check_usage_error(kArgs + " --json /nonexistent-dir/v.json", "cannot write '/nonexistent-dir/v.json'");
}

// PyTorch's own quantised models (tools/make_golden_data.sh: export_torch.py --quantize int8).
std::string int8_args(const std::string& model, const std::string& weights = "") {
  const std::string dir = std::string(CONVLAB_TEST_DATA) + "/" + model + "/int8/";
  return "validate --precision int8 --model " + model + " --threads 1 --weights " +
         (weights.empty() ? dir + "quantized.safetensors" : weights) + " --input " + dir + "input.safetensors --expect " +
         dir + "expect.safetensors";
}

TEST_CASE("cli validate --precision int8: PyTorch's quantised resnet8 and mobilenet-tiny pass with every int8 kernel") {
  for (const std::string model : {"resnet8", "mobilenet-tiny"}) {
    CAPTURE(model);
    const std::string json = (scratch() / "v8.json").string();
    const Outcome o = run_convlab(int8_args(model) + " --kernel ours --json " + json);
    CHECK_MESSAGE(o.code == 0, (o.out + o.err));
    CHECK(o.out.find("engine") != std::string::npos);  // which quantised engine made the reference
    const auto doc = nlohmann::json::parse(slurp(json));
    CHECK(doc["precision"] == "int8");
    CHECK(doc["kernels"].size() == (model == "resnet8" ? 6u : 8u));  // 20, 21, 23, 24, 26, auto_int8; mobilenet-tiny also 22, 25
    int judged = 0;
    for (const auto& layer : doc["kernels"][0]["layers"]) {
      if (!layer["judged"].get<bool>()) continue;
      ++judged;
      CHECK(layer["max_quanta"].get<double>() <= 1);
    }
    CHECK(judged >= 5);  // the deep layers, whose inputs the file holds
  }
}

TEST_CASE("cli validate --precision int8: one flipped int8 weight fails (exit 1) at its layer") {
  convlab::TensorFile q = convlab::read_safetensors(std::string(CONVLAB_TEST_DATA) + "/resnet8/int8/quantized.safetensors");
  std::vector<std::int64_t>& w = q.tensors.at("layer3.0.conv1.weight").integers;
  const auto largest = std::ranges::max_element(w, {}, [](std::int64_t v) { return v < 0 ? -v : v; });
  *largest = -std::max<std::int64_t>(*largest, -127);
  const std::string bad = (scratch() / "flipped.safetensors").string();
  convlab::write_safetensors(bad, q);
  const Outcome o = run_convlab(int8_args("resnet8", bad) + " --kernel cpu.21_int8_direct_madd");
  CHECK(o.code == 1);
  CHECK(o.out.find("first diverging layer: layer3.0.conv1") != std::string::npos);
}

TEST_CASE("cli validate --precision int8: bad usage exits 2 with one line") {
  check_usage_error(int8_args("resnet8") + " --backend metal", "--precision int8: the metal backend has no int8 kernels");
  check_usage_error(int8_args("resnet8") + " --backend cuda --kernel cpu.23_int8_direct_vnni",
                    "'cpu.23_int8_direct_vnni' is not an int8 kernel of cuda");
  check_usage_error(int8_args("resnet8") + " --kernel cpu.01_im2col_eigen", "cpu.01_im2col_eigen");
  check_usage_error(int8_args("resnet8") + " --kernel cpu.22_int8_depthwise",
                    "--kernel: cpu.22_int8_depthwise supports no conv or linear layer of resnet8");
  check_usage_error(int8_args("resnet8", kResnet + "weights.safetensors"), "holds no I8 weights");  // an FP32 state_dict
  std::string int4 = int8_args("resnet8");
  int4.replace(int4.find("int8"), 4, "int4");
  check_usage_error(int4, "int4");
}

TEST_CASE("cli run: --weights loads a state_dict, and a bad one exits 2") {
  const Outcome o = run_convlab("run --model resnet8 --batch 1 --warmup 0 --trials 2 --threads 1 --weights " + kResnet +
                                "weights.safetensors");
  CHECK_MESSAGE(o.code == 0, o.err);
  check_usage_error("run --model resnet8 --weights /nonexistent/w.safetensors", "cannot read '/nonexistent/w.safetensors'");
  CHECK(run_convlab("run --model resnet8 --weights /nonexistent/w.safetensors").out.empty());  // before any output
}

TEST_CASE("cli run: --per-layer prints each layer's median and share, and writes them to JSON") {
  const std::string json = (scratch() / "pl.json").string();
  const Outcome o = run_convlab("run --model mobilenet-tiny --batch 1 --warmup 1 --trials 3 --threads 1 --per-layer --json " + json);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("per layer: mobilenet-tiny with cpu.00_reference at batch 1") != std::string::npos);
  CHECK(o.out.find("features.3.dw") != std::string::npos);
  const auto layers = nlohmann::json::parse(slurp(json))["results"][0]["per_layer"];
  REQUIRE(layers.size() == 13);
  double share = 0;
  for (const auto& l : layers) share += l["share"].get<double>();
  CHECK(share == doctest::Approx(1.0));
  CHECK(layers[0]["kernel"] == "cpu.00_reference");
  // the roofline's coordinates: features.0.0, 3 -> 16 3x3 on 32x32: 2 x 16 x 1024 x 27 FLOPs;
  // (3 + 16) x 1024 activations + 432 weights, 4 bytes each, + 16 biases
  CHECK(layers[0]["flops"] == 2.0 * 16 * 1024 * 27);
  CHECK(layers[0]["bytes"] == (19.0 * 1024 + 432) * 4 + 16 * 4);
  CHECK(o.out.find("read bandwidth") != std::string::npos);  // the memory roof, measured for it
  CHECK(nlohmann::json::parse(slurp(json))["context"]["peak"]["read_gbs"].get<double>() > 0);
}

TEST_CASE("cli validate: tools/export_torch.py finds the Python that has torch, or says which one lacks it") {
  const std::string script = std::string(CONVLAB_SOURCE_DIR) + "/tools/export_torch.py --help";
  if (run_convlab_with("/usr/bin/python3 -c 'import torch'").code != 0) {
    std::printf("SKIPPED: /usr/bin/python3 has no torch here (python3-torch is not installed)\n");
    return;
  }
  // Another python3 without torch first (here: a copy of Debian's run without its site packages)
  // hands over to Debian's, which has it.
  const fs::path other = scratch() / "other-python";
  fs::create_directories(other);
  fs::copy_file("/usr/bin/python3", other / "python3", fs::copy_options::overwrite_existing);
  const Outcome handed_over = run_convlab_with((other / "python3").string() + " -S " + script);
  CHECK_MESSAGE(handed_over.code == 0, handed_over.err);
  CHECK(handed_over.out.find("usage: export_torch.py") != std::string::npos);
  // Debian's own Python without torch (its site packages off) says what is missing, in one line.
  const Outcome missing = run_convlab_with("/usr/bin/python3 -S " + script);
  CHECK(missing.code != 0);
  CHECK(lines(missing.err) == 1);
  CHECK(missing.err.find("export_torch.py: /usr/bin/python3 has no torch: install it (Debian: apt-get install python3-torch)") == 0);
}
