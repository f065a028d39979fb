// Validation against PyTorch: every CPU kernel in the list, on the golden references under
// tests/data (made by tools/make_golden_data.sh with PyTorch 1.13), for all four networks at batch
// 1 and 3; and the negative controls that prove the validator can fail.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "bench/check/validate.hpp"
#include "golden_test_util.hpp"
#include "kernels/common/error.hpp"
#include "models/weight_file.hpp"

using namespace convlab;

namespace {
using test::Golden;
using test::golden;

void validate_every_cpu_kernel(const std::string& model) {
  const ModelInfo& info = *find_model(model);
  // batch 1 and 3, and batch 1 of PyTorch's ONNX export of the network (tests/data/<model>/model.onnx)
  for (const int batch : {1, 3, 0}) {
    const bool onnx = batch == 0;
#ifndef CONVLAB_WITH_ONNX
    if (onnx) continue;
#endif
    CAPTURE(onnx);
    const Golden g = golden(model, onnx ? 1 : batch);
    const Network net = onnx ? load_model(fmt::format("{}/{}/model.onnx", CONVLAB_TEST_DATA, model), "", 0)
                             : build_from_file(info, g.weights, model);
    check_reference(net, g.input, g.expect);
    const std::vector<std::string> covering = kernels_covering(net, Backend::cpu);
    for (const KernelInfo& k : all_kernels()) {
      if (k.backend != Backend::cpu) continue;
      if (std::ranges::find(covering, k.id) == covering.end()) {
        MESSAGE(k.id << " supports no conv layer of " << model << ": not validated on it");
        continue;
      }
      const KernelValidation v = validate_kernel(net, g.input.tensors.at("input"), g.expect, std::string(k.id));
      INFO(describe(v));  // a kernel that supports only some layers runs those, the oracle the rest
      CHECK(v.pass);
      CHECK(v.top1_agree == (onnx ? 1 : batch));
      CHECK(v.layers.size() == g.expect.tensors.size());
      CHECK(v.conv_layers_run >= 1);
    }
  }
}
}  // namespace

TEST_CASE("validate: lab-cnn matches PyTorch with every CPU kernel") { validate_every_cpu_kernel("lab-cnn"); }
TEST_CASE("validate: lenet5 matches PyTorch with every CPU kernel") { validate_every_cpu_kernel("lenet5"); }
TEST_CASE("validate: resnet8 matches PyTorch with every CPU kernel") { validate_every_cpu_kernel("resnet8"); }
TEST_CASE("validate: mobilenet-tiny matches PyTorch with every CPU kernel") { validate_every_cpu_kernel("mobilenet-tiny"); }

#ifdef CONVLAB_WITH_ONNX
TEST_CASE("validate: a PyTorch CNN padding unevenly (F.pad before its convs), through ONNX, with every CPU kernel") {
  // tests/data/onnx-padded, by tools/make_padded_onnx.py: 'same' for an even kernel, TensorFlow's
  // SAME at stride 2, a depthwise conv padded on one side; each conv's output a graph output.
  const std::string dir = fmt::format("{}/onnx-padded/", CONVLAB_TEST_DATA);
  const Network net = load_model(dir + "model.onnx", "", 0);
  REQUIRE(net.layers().size() == 5);  // same4, tf_same, dw, the global average pool, output
  CHECK(net.layers()[1].conv.pad_h == 0);
  CHECK(net.layers()[1].conv.pad_bottom() == 1);
  CHECK(net.layers()[2].conv.pad_h == 2);
  CHECK(net.layers()[2].conv.pad_bottom() == 0);
  const TensorFile input = read_safetensors(dir + "input.safetensors"), expect = read_safetensors(dir + "expect.safetensors");
  for (const std::string& id : kernels_covering(net, Backend::cpu)) {
    const KernelValidation v = validate_kernel(net, input.tensors.at("input"), expect, id);
    INFO(describe(v));
    CHECK(v.pass);
    CHECK(v.top1_agree == 2);
    CHECK(v.layers.size() == expect.tensors.size());  // the last layer is "output": one row for it
  }
}
#endif

TEST_CASE("validate: negative control: one corrupted weight tensor fails, at the layer that uses it") {
  Golden g = golden("resnet8", 1);
  g.weights.tensors.at("layer3.0.conv1.weight").values[17] *= -1.0f;  // one sign flipped
  const Network net = build_from_file(*find_model("resnet8"), g.weights, "corrupted");
  for (const std::string& id : kernels_covering(net, Backend::cpu)) {  // however loose a kernel's tolerance
    const KernelValidation v = validate_kernel(net, g.input.tensors.at("input"), g.expect, id);
    INFO(describe(v));
    CHECK_FALSE(v.pass);
    CHECK(v.first_divergent == "layer3.0.conv1");
  }

  Golden bn = golden("resnet8", 3);  // a BatchNorm statistic is a weight too: folding must use it
  bn.weights.tensors.at("layer3.0.bn2.running_var").values[3] *= 1.5f;
  const Network net_bn = build_from_file(*find_model("resnet8"), bn.weights, "corrupted");
  const KernelValidation v_bn = validate_kernel(net_bn, bn.input.tensors.at("input"), bn.expect, "cpu.00_reference");
  CHECK_FALSE(v_bn.pass);
  CHECK(v_bn.first_divergent == "avgpool");  // the first layer of the batch-3 set downstream of it
}

TEST_CASE("validate: on the CPU each layer is judged on the reference's own inputs, the chained run reported") {
  Golden g = golden("lenet5", 1);
  const Network net = build_from_file(*find_model("lenet5"), g.weights, "w");
  for (float& x : g.input.tensors.at("input").values) x = -x;  // a different input than the expect file's
  const KernelValidation v = validate_kernel(net, g.input.tensors.at("input"), g.expect, "cpu.02_direct_xsimd");
  INFO(describe(v));
  CHECK_FALSE(v.pass);
  // The golden file leaves out conv1 (large): pool1, its first layer, is judged on the chained run
  // from the input, as a layer whose inputs the file lacks is
  REQUIRE(v.layers.size() == 7);
  CHECK(v.first_divergent == "pool1");
  CHECK_FALSE(v.layers[0].own_inputs);
  CHECK(describe(v).find("FAIL *") != std::string::npos);
  for (std::size_t i = 1; i + 1 < v.layers.size(); ++i) {  // the rest, fed from the expect file, agree
    CAPTURE(v.layers[i].layer);
    CHECK(v.layers[i].own_inputs);
    CHECK(v.layers[i].pass);
    CHECK(v.layers[i].normalised < 1e-5);
    CHECK(v.layers[i].chained_normalised > 0.1);  // while the whole run from that input differs
  }
  CHECK_FALSE(v.layers.back().judged);  // the logits: judged by top-1 (fc3 was judged on its inputs)
  CHECK(describe(v).find("each layer run on the reference's own inputs (judged)") != std::string::npos);

  TensorFile logits_only = g.expect;  // nothing but the logits: they are judged on the chained run
  std::erase_if(logits_only.tensors, [](const auto& t) { return t.first != "output"; });
  const KernelValidation only = validate_kernel(net, golden("lenet5", 1).input.tensors.at("input"), logits_only,
                                                "cpu.02_direct_xsimd");
  REQUIRE(only.layers.size() == 1);
  CHECK(only.layers[0].judged);
  CHECK_FALSE(only.layers[0].own_inputs);
  CHECK(only.pass);
}

TEST_CASE("validate: a kernel runs the conv layers it supports, the oracle the rest") {
  const Golden g = golden("mobilenet-tiny", 1);
  const Network net = build_from_file(*find_model("mobilenet-tiny"), g.weights, "w");
  const KernelValidation v = validate_kernel(net, g.input.tensors.at("input"), g.expect, "cpu.00_reference");
  CHECK(v.conv_layers == 11);
  CHECK(v.conv_layers_run == 11);
  CHECK(kernels_covering(net, Backend::cpu).front() == "cpu.00_reference");
  CHECK_THROWS_WITH_AS(validate_kernel(build_lab_cnn(seeded_weights(1)), g.input.tensors.at("input"), g.expect, "cpu.42_nope"),
                       "unknown kernel 'cpu.42_nope'", InputError);
}

TEST_CASE("validate: layer comparison is relative to the reference's magnitude") {
  const Tolerance t = tolerance_for(1.0);
  const std::vector<float> ref{1000, -2000, 0, 500}, close{1000.01f, -2000, 0, 500};
  const LayerComparison ok = compare_layer("big", close, ref, t);
  CHECK(ok.pass);
  CHECK(ok.max_abs == doctest::Approx(0.01).epsilon(0.01));
  CHECK(ok.peak == 2000);
  const std::vector<float> small_ref{1e-3f, -2e-3f, 0, 5e-4f}, small_off{1.1e-3f, -2e-3f, 0, 5e-4f};
  const LayerComparison bad = compare_layer("small", small_off, small_ref, t);  // 10% off at a small scale
  CHECK_FALSE(bad.pass);
  CHECK(bad.max_rel == doctest::Approx(0.1).epsilon(0.01));
  std::vector<float> nan = ref;
  nan[2] = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(compare_layer("nan", nan, ref, t).pass);
  CHECK(tolerance_for(4.0).normalised == 2 * kNormalisedError);  // root-mean-square growth: sqrt(error_scale)
  CHECK(tolerance_for(0.5).peak_fraction == kPeakFraction);
}

TEST_CASE("validate: references that do not fit the network are errors") {
  const Golden g = golden("lenet5", 1);
  const Network lenet = build_from_file(*find_model("lenet5"), g.weights, "w");
  const Network cnn = build_lab_cnn(seeded_weights(1));
  CHECK_THROWS_WITH_AS(check_reference(cnn, g.input, g.expect),
                       ("the input file '" + g.input.path + "': tensor 'input' has shape [1,1,28,28], lab-cnn needs N x 3 x 32 x 32")
                           .c_str(),
                       InputError);
  TensorFile expect = g.expect;
  expect.tensors["conv9"] = expect.tensors.at("output");
  CHECK_THROWS_WITH_AS(check_reference(lenet, g.input, expect), "expect tensor 'conv9' is not a layer of lenet5",
                       InputError);
  expect = g.expect;
  expect.tensors.erase("output");
  CHECK_THROWS_WITH_AS(check_reference(lenet, g.input, expect),
                       ("the expect file '" + g.expect.path + "' has no tensor 'output'").c_str(), InputError);
}
