// Every user-facing error path of the convlab command that the other CLI suites leave out: each
// exits 2 with one line naming the bad value (bench/commands/cli.cpp and its subcommands, option by option).
#include <doctest/doctest.h>

#include "bench/report/wording.hpp"
#include "models/catalog.hpp"
#include "models/safetensors.hpp"
#include "tests/cli_test_util.hpp"

using namespace convlab::test;

namespace {
const std::string kData = std::string(CONVLAB_TEST_DATA) + "/";
const std::string kQuick = "run --warmup 0 --trials 1 --batch 1 --kernel cpu.00_reference ";

// lab-cnn's state_dict with `edit` applied, written to the scratch folder.
template <class Edit>
std::string edited_lab_cnn_weights(const std::string& file, Edit edit) {
  convlab::TensorFile w;
  convlab::build_lab_cnn([&](const std::string& name, const std::vector<std::int64_t>& shape, std::int64_t fan_in) {
    auto values = convlab::seeded_weights(1)(name, shape, fan_in);
    w.tensors[name] = {.dtype = "F32", .shape = shape, .values = values};
    return values;
  });
  edit(w);
  const std::string path = (scratch() / file).string();
  convlab::write_safetensors(path, w);
  return path;
}
}  // namespace

TEST_CASE("cli errors: run's values, names and output paths") {
  check_usage_error(kQuick + "--csv /nonexistent-dir/out.csv", "cannot write '/nonexistent-dir/out.csv'");
  check_usage_error("run --batch 1099511627777", "--batch: 1099511627777 is too large (at most 1099511627776)");
  check_usage_error("run --batch 99999999999999999999999", "--batch: 99999999999999999999999 is too large");
  check_usage_error("run --seed abc", "--seed");
  check_usage_error("run --backend cuda --kernel cpu.00_reference", "--kernel: unknown kernel 'cpu.00_reference'");
  // A kernel that exists but cannot run the model's layers: refused before anything is measured.
  check_usage_error("run --model lab-cnn --kernel cpu.05_depthwise_xsimd --warmup 0 --trials 1 --batch 1",
                    "cpu.05_depthwise_xsimd");
  check_usage_error("--threads -1", "--threads: '-1' is not a positive integer");
}

TEST_CASE("cli errors: run --weights that do not fit the model are named, tensor by tensor") {
  const std::string misshapen = edited_lab_cnn_weights("misshapen.safetensors", [](convlab::TensorFile& w) {
    w.tensors.at("conv2.weight").shape = {32, 16, 9, 1};  // same count of values, wrong shape
  });
  check_usage_error(kQuick + "--weights " + misshapen, "'conv2.weight' has shape [32, 16, 9, 1], the network needs [32, 16, 3, 3]");
  const std::string missing = edited_lab_cnn_weights("missing.safetensors", [](convlab::TensorFile& w) { w.tensors.erase("fc.bias"); });
  check_usage_error(kQuick + "--weights " + missing, "not a lab-cnn state_dict: missing 'fc.bias' [10]");
  const std::string extra = edited_lab_cnn_weights("extra.safetensors", [](convlab::TensorFile& w) {
    w.tensors["conv9.weight"] = {.dtype = "F32", .shape = {1}, .values = {1}};
  });
  check_usage_error(kQuick + "--weights " + extra, "extra 'conv9.weight'");
  check_usage_error(kQuick + "--weights " + kData + "lenet5/weights.safetensors", "not a lab-cnn state_dict");
  check_usage_error(kQuick + "--weights " + kData, "cannot read '" + kData + "': it is a directory");
  const std::string garbage = (scratch() / "garbage.safetensors").string();
  { std::ofstream(garbage) << std::string(8, '\x10') << "{not json}......"; }
  check_usage_error(kQuick + "--weights " + garbage, "header length 1157442765409226768 runs past the end of the file (24 bytes)");
}

TEST_CASE("cli errors: validate's input and expect files of the wrong shape or model") {
  const std::string args = "validate --model resnet8 --weights " + kData + "resnet8/weights.safetensors ";
  check_usage_error(args + "--input " + kData + "lenet5/b1/input.safetensors --expect " + kData + "resnet8/b1/expect.safetensors",
                    "the input file '" + kData + "lenet5/b1/input.safetensors': tensor 'input' has shape [1,1,28,28], "
                    "resnet8 needs N x 3 x 32 x 32");
  check_usage_error(args + "--input " + kData + "resnet8/b1/expect.safetensors --expect " + kData + "resnet8/b1/expect.safetensors",
                    "the input file '" + kData + "resnet8/b1/expect.safetensors' has no tensor 'input'");
  check_usage_error(args + "--input " + kData + "resnet8/b1/input.safetensors --expect " + kData + "lab-cnn/b1/expect.safetensors",
                    "is not a layer of resnet8");
  check_usage_error(args + "--input " + kData + "resnet8/b1/input.safetensors --expect /nonexistent/e.safetensors",
                    "cannot read '/nonexistent/e.safetensors'");
  check_usage_error(args + "--input " + kData + "resnet8/b1/input.safetensors --expect " + kData +
                        "resnet8/b1/expect.safetensors --threads -3",
                    "--threads: '-3' is not a positive integer");
}

TEST_CASE("cli errors: conv's values, descriptors and output paths") {
  const std::string p = "conv --problem mb1ic3ih8oc4kh3 --warmup 0 --trials 1 ";
  check_usage_error(p + "--batch 0", "--batch: '0' is not a positive integer");
  check_usage_error("conv --problem mb1ic3ih8oc4kh3 --warmup -1", "--warmup: -1 must be 0 or more");
  check_usage_error("conv --problem mb1ic3ih8oc4kh3 --trials 0", "--trials: 0 must be at least 1");
  check_usage_error(p + "--threads -1", "--threads: '-1' is not a positive integer");
  check_usage_error(p + "--percentile mode", "unknown percentile method 'mode'");
  check_usage_error(p + "--json /nonexistent-dir/c.json", "cannot write '/nonexistent-dir/c.json'");
  check_usage_error(p + "--csv /nonexistent-dir/c.csv", "cannot write '/nonexistent-dir/c.csv'");
  check_usage_error("conv --problem mb1ic3ih8oc4kh3kw99999999", "kw 99999999 is out of range");
  check_usage_error("conv --problem mb1ic3ih8oc4kh3id2", "is a depth field");
  check_usage_error("conv --problems " + kData, "--problems: cannot read '" + kData + "': it is a directory");
}

TEST_CASE("cli errors: the other subcommands") {
  check_usage_error("peak --threads -4", "--threads: '-4' is not a positive integer");
  check_usage_error("env --yaml", "--yaml");
  check_usage_error("kernels extra", "extra");
  check_usage_error("overhead --trials -5", "--trials: -5 must be at least 1");
}

TEST_CASE("cli errors: messages speak convlab, not the command-line library, and count in words") {
  check_usage_error("compare a.json", "compare needs two results files: convlab compare A.json B.json");
  check_usage_error("report", "report needs at least one results file");
  check_usage_error("run --batch 99999999999999999999", "--batch: 99999999999999999999 is too large");
  check_usage_error("run --batch 1,x", "--batch: 'x' is not a positive integer");
  const Outcome env = run_convlab("env");
  CHECK(env.out.find(" in use\n") != std::string::npos);
  CHECK(env.out.find("1 threads") == std::string::npos);
  CHECK(convlab::count_of(1, "thread") == "1 thread");
  CHECK(convlab::count_of(2, "result") == "2 results");
  CHECK(convlab::count_of(0, "result") == "0 results");
}
