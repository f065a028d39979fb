// The safetensors reader and the state_dict loader: round trips, dtype conversion, and every kind
// of bad file giving its own clear InputError, never a crash.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "kernels/common/error.hpp"
#include "models/safetensors.hpp"
#include "models/weight_file.hpp"

using namespace convlab;

namespace {
// A file from a hand-written header and data section, for the malformed cases.
std::string raw_file(const std::string& header, const std::string& data) {
  const std::uint64_t n = header.size();
  return std::string(reinterpret_cast<const char*>(&n), 8) + header + data;
}

std::string floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)), v.size() * sizeof(float));
}

void check_rejected(const std::string& bytes, const std::string& message) {
  CAPTURE(message);
  CHECK_THROWS_WITH_AS(parse_safetensors(bytes, "f.safetensors"), doctest::Contains(message.c_str()), InputError);
}

TensorFile lenet5_state_dict() {
  TensorFile file;
  const Network net = build_lenet5([&](const std::string& name, const std::vector<std::int64_t>& shape, std::int64_t fan_in) {
    auto values = seeded_weights(9)(name, shape, fan_in);
    file.tensors[name] = StoredTensor{.dtype = "F32", .shape = shape, .values = values};
    return values;
  });
  return file;
}
}  // namespace

TEST_CASE("safetensors: F32 round trip keeps names, shapes, values and metadata") {
  TensorFile file;
  file.tensors["a"] = {.dtype = "F32", .shape = {2, 3}, .values = {1, 2, 3, 4, 5, -6.5f}};
  file.tensors["b.c"] = {.dtype = "F32", .shape = {1}, .values = {std::numeric_limits<float>::denorm_min()}};
  file.tensors["scalar"] = {.dtype = "F32", .shape = {}, .values = {7}};
  file.metadata["torch_version"] = "1.13";
  const std::string bytes = serialize_safetensors(file);
  std::uint64_t header_len;
  std::memcpy(&header_len, bytes.data(), 8);
  CHECK(header_len % 8 == 0);  // the format's alignment
  const TensorFile back = parse_safetensors(bytes, "mem");
  CHECK(back.metadata == file.metadata);
  REQUIRE(back.tensors.size() == 3);
  for (const auto& [name, t] : file.tensors) {
    CHECK(back.tensors.at(name).shape == t.shape);
    CHECK(back.tensors.at(name).values == t.values);
  }
}

TEST_CASE("safetensors: F16 and F64 are converted to float on load, integers are listed without values") {
  const std::uint16_t halves[] = {0x3c00, 0xc000, 0x0001, 0x7c00, 0x3555};  // 1, -2, 2^-24, inf, ~1/3
  const double doubles[] = {0.1, -1e30};
  const std::int64_t count[] = {42};
  std::string data(reinterpret_cast<const char*>(halves), sizeof halves);
  data += std::string(reinterpret_cast<const char*>(doubles), sizeof doubles);
  data += std::string(reinterpret_cast<const char*>(count), sizeof count);
  const std::string header = R"({"h":{"dtype":"F16","shape":[5],"data_offsets":[0,10]},)"
                             R"("d":{"dtype":"F64","shape":[2],"data_offsets":[10,26]},)"
                             R"("bn.num_batches_tracked":{"dtype":"I64","shape":[],"data_offsets":[26,34]}})";
  const TensorFile f = parse_safetensors(raw_file(header, data), "mem");
  const auto& h = f.tensors.at("h").values;
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == -2.0f);
  CHECK(h[2] == std::ldexp(1.0f, -24));
  CHECK(std::isinf(h[3]));
  CHECK(h[4] == doctest::Approx(1.0 / 3).epsilon(1e-3));
  CHECK(f.tensors.at("d").values == std::vector<float>{0.1f, -1e30f});
  CHECK_FALSE(f.tensors.at("bn.num_batches_tracked").is_float());
  CHECK(f.tensors.at("bn.num_batches_tracked").values.empty());
}

TEST_CASE("safetensors: malformed files give their own error") {
  const std::string data = floats({1, 2, 3, 4});
  const std::string good = raw_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", data);
  CHECK_NOTHROW(parse_safetensors(good, "f"));
  check_rejected("", "truncated: 0 bytes");
  check_rejected(good.substr(0, 5), "truncated: 5 bytes");
  check_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", data).substr(0, 30),
                 "header length 55 runs past the end of the file (30 bytes)");
  check_rejected(good.substr(0, good.size() - 1), "tensor 'a' data_offsets [0, 16] lie outside the 15 data bytes");
  check_rejected(raw_file(R"({"a": [1, 2)", data), "the header is not valid JSON");
  check_rejected(raw_file(R"([1, 2])", data), "the header is not a JSON object");
  check_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[4]}})", data), "tensor 'a' needs dtype");
  check_rejected(raw_file(R"({"a":{"dtype":"Q4","shape":[4],"data_offsets":[0,16]}})", data),
                 "tensor 'a' has unknown dtype 'Q4'");
  check_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[5],"data_offsets":[0,16]}})", data),
                 "tensor 'a' holds 16 bytes but 5 F32 of shape [5] need 20");
  check_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", data),
                 "tensor 'a' has a bad shape [-4]");
  check_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[8,4]}})", data), "lie outside");
  check_rejected(raw_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                          data),
                 "tensors 'a' and 'b' overlap");
  check_rejected(raw_file(R"({"__metadata__":[1]})", data), "__metadata__ is not an object");
  const std::string deep(200000, '[');  // nesting that a recursive parser would overflow the stack on
  check_rejected(raw_file(deep + std::string(200000, ']'), data), "the header is not a JSON object");
  check_rejected(raw_file(R"({"a":)" + deep + std::string(200000, ']') + "}", data), "tensor 'a' needs dtype");
  CHECK_THROWS_WITH_AS(read_safetensors("/nonexistent/w.safetensors"), "cannot read '/nonexistent/w.safetensors'",
                       InputError);
}

// Found by tests/fuzz/fuzz_safetensors (its own seed): a zero-element tensor passed the null data()
// of an empty vector to memcpy, undefined behaviour that UBSan reports in the sanitizer build.
TEST_CASE("safetensors: a tensor with no elements reads and writes as empty") {
  const TensorFile file = parse_safetensors(
      raw_file(R"({"s": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]},)"
               R"( "e": {"dtype": "F32", "shape": [0, 4], "data_offsets": [4, 4]}})",
               floats({3})),
      "empty.safetensors");
  REQUIRE(file.tensors.size() == 2);
  CHECK(file.tensors.at("e").values.empty());
  CHECK(file.tensors.at("e").shape == std::vector<std::int64_t>{0, 4});
  CHECK(file.tensors.at("s").values == std::vector<float>{3});
  const TensorFile back = parse_safetensors(serialize_safetensors(file), "mem");
  CHECK(back.tensors.at("e").values.empty());
  CHECK(back.tensors.at("e").shape == std::vector<std::int64_t>{0, 4});
}

TEST_CASE("safetensors: every truncation and every corrupted byte of a file is an error or a parse, never a crash") {
  TensorFile file;
  file.tensors["w"] = {.dtype = "F32", .shape = {2, 2}, .values = {1, 2, 3, 4}};
  file.tensors["b"] = {.dtype = "F32", .shape = {2}, .values = {5, 6}};
  const std::string bytes = serialize_safetensors(file);
  for (std::size_t n = 0; n < bytes.size(); ++n) CHECK_THROWS_AS(parse_safetensors(bytes.substr(0, n), "t"), InputError);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    for (const char c : {'\0', '\xff', '{', '9'}) {
      std::string bad = bytes;
      bad[i] = c;
      try {
        parse_safetensors(bad, "t");
      } catch (const InputError&) {
      }
    }
}

TEST_CASE("weights: a state_dict loads by name, and missing, extra, misshapen and non-float tensors are named") {
  const ModelInfo& lenet = *find_model("lenet5");
  TensorFile sd = lenet5_state_dict();
  const Network net = build_from_file(lenet, sd, "sd");
  CHECK(net.layers()[0].weight == sd.tensors.at("conv1.weight").values);

  sd.tensors["extra.num_batches_tracked"] = {.dtype = "I64", .shape = {}};  // a training counter: ignored
  CHECK_NOTHROW(build_from_file(lenet, sd, "sd"));

  TensorFile missing = sd;
  missing.tensors.erase("fc2.bias");
  missing.tensors.erase("conv1.weight");
  CHECK_THROWS_WITH_AS(build_from_file(lenet, missing, "sd"),
                       "sd: not a lenet5 state_dict: missing 'conv1.weight' [6, 1, 5, 5], 'fc2.bias' [84]", InputError);
  TensorFile extra = sd;
  extra.tensors["fc4.weight"] = {.dtype = "F32", .shape = {1}, .values = {0}};
  CHECK_THROWS_WITH_AS(build_from_file(lenet, extra, "sd"), "sd: not a lenet5 state_dict: extra 'fc4.weight'", InputError);
  TensorFile shape = sd;
  shape.tensors["fc3.weight"].shape = {10, 42};
  CHECK_THROWS_WITH_AS(build_from_file(lenet, shape, "sd"),
                       "sd: not a lenet5 state_dict: 'fc3.weight' has shape [10, 42], the network needs [10, 84]",
                       InputError);
  TensorFile dtype = sd;
  dtype.tensors["fc3.bias"] = {.dtype = "I32", .shape = {10}};
  CHECK_THROWS_WITH_AS(build_from_file(lenet, dtype, "sd"),
                       "sd: not a lenet5 state_dict: 'fc3.bias' has dtype I32 (need F32, F16 or F64)", InputError);
  // another architecture's weights: every problem in one message
  CHECK_THROWS_WITH_AS(build_from_file(*find_model("resnet8"), sd, "sd"),
                       "sd: not a resnet8 state_dict: missing 'bn1.weight' [16], 'bn1.bias' [16], 'bn1.running_mean' [16], "
                       "'bn1.running_var' [16], 'layer1.0.conv1.weight' [16, 16, 3, 3], 'layer1.0.bn1.weight' [16], "
                       "'layer1.0.bn1.bias' [16], 'layer1.0.bn1.running_mean' [16], … (38 more); extra 'conv1.bias', "
                       "'conv2.bias', 'conv2.weight', 'fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight', 'fc3.bias', "
                       "… (1 more); 'conv1.weight' has shape [6, 1, 5, 5], the network needs [16, 3, 3, 3]",
                       InputError);
}

TEST_CASE("weights: load_network reads a file written by write_safetensors") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "convlab_lenet5_test.safetensors";
  const TensorFile sd = lenet5_state_dict();
  write_safetensors(path.string(), sd);
  const Network net = load_network(*find_model("lenet5"), path.string());
  CHECK(net.layers().back().bias == sd.tensors.at("fc3.bias").values);
  std::filesystem::remove(path);
}
