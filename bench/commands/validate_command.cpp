// The `convlab validate` subcommand: its options and what it runs (bench/check/validate.hpp does the
// comparing).
#include "bench/commands/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "bench/check/validate.hpp"
#include "bench/check/validate_int8.hpp"
#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/report/results.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "models/onnx_model.hpp"
#include "models/quantized_file.hpp"
#include "models/weight_file.hpp"

namespace convlab {

namespace {

struct ValidateOptions {
  std::string model, weights, input, expect;
  std::string backend = "cpu";
  std::string precision = "fp32";
  std::string kernels = "all";
  std::string json;
  int threads = 0;
};

}  // namespace

CLI::App* add_validate_options(CLI::App& app, ValidateOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "validate", "Check a model's every layer against PyTorch's outputs (files from tools/export_torch.py)");
  cmd->add_option("--model", o.model, "Network (see `convlab models`) or an ONNX file")->required();
  cmd->add_option("--weights", o.weights,
                  "weights.safetensors: the PyTorch state_dict; with --precision int8 quantized.safetensors; none for "
                  "an ONNX model, which carries its weights");
  cmd->add_option("--input", o.input, "input.safetensors: tensor `input`, N x C x H x W")->required();
  cmd->add_option("--expect", o.expect, "expect.safetensors: `output` and each layer's output")->required();
  cmd->add_option("--backend", o.backend, "cpu, cuda or metal")->capture_default_str();
  cmd->add_option("--precision", o.precision,
                  "fp32, or int8: the quantised model (tools/export_torch.py --quantize int8), judged in quanta")
      ->capture_default_str();
  cmd->add_option("--kernel", o.kernels, "Kernel id(s), comma-separated, all, or ours (all but the baselines)")
      ->capture_default_str();
  add_threads_option(*cmd, o.threads);
  add_auto_options(*cmd);
  cmd->add_option("--json", o.json, "Write the comparison as JSON");
  return cmd;
}

// --kernel: "all" is `covering`, "ours" the same without the baselines; else each id must name a
// kernel of the backend and precision that covers a layer.
std::vector<std::string> chosen_kernels(const ValidateOptions& o, Backend backend, Precision precision,
                                        std::vector<std::string> covering) {
  if (o.kernels == "all") return covering;
  if (o.kernels == "ours") {
    std::erase_if(covering, [precision](const std::string& id) {
      return precision == Precision::int8 ? find_int8_kernel(id)->baseline : find_kernel(id)->baseline;
    });
    return covering;
  }
  std::vector<std::string> kernels = parse_kernel_ids(o.kernels, backend, precision);
  for (const std::string& id : kernels)
    if (std::ranges::find(covering, id) == covering.end())
      throw InputError(fmt::format("--kernel: {} supports no {} layer of {}", id,
                                   precision == Precision::int8 ? "conv or linear" : "conv", o.model));
  return kernels;
}

// Exit 0 when every kernel passes, 1 when any fails; throws InputError for bad usage (exit 2).
int run_validate(const ValidateOptions& o) {
  set_threads(o.threads);
  const std::string model = parse_model(o.model);
  const Backend backend = parse_backend(o.backend);
  const Precision precision = parse_precision(o.precision);
  if (precision == Precision::int8 &&
      std::ranges::none_of(all_int8_kernels(), [backend](const Int8KernelInfo& k) { return k.backend == backend; }))
    throw InputError(fmt::format("--precision int8: the {} backend has no int8 kernels", o.backend));
  const bool onnx = is_onnx_model(model);
  if (onnx && precision == Precision::int8)
    throw InputError("--precision int8: an ONNX model is validated in FP32 only for now (the int8 file names layers "
                     "as PyTorch's modules, an ONNX graph as its values)");
  if (!onnx && o.weights.empty())
    throw InputError(fmt::format("--weights: validating {} needs the state_dict PyTorch's outputs were made with", model));

  // int8: the architecture from the model, its weights and quantisation from the interchange file.
  const Network net = load_model(model, precision == Precision::int8 ? "" : o.weights, 0);
  std::optional<QuantizedNetwork> quantized;
  if (precision == Precision::int8) quantized.emplace(load_quantized(net, read_safetensors(o.weights), o.weights));
  const TensorFile input = read_safetensors(o.input), expect = read_safetensors(o.expect);
  check_reference(net, input, expect);
  const std::int64_t batch = input.tensors.at("input").shape[0];
  const std::vector<std::string> kernels =
      chosen_kernels(o, backend, precision,
                     precision == Precision::int8 ? int8_kernels_covering(net, batch, backend) : kernels_covering(net, backend));
  require_backend(backend);
  if (!o.json.empty()) check_writable(o.json);  // a bad path fails now, not after the runs

  const auto metadata = [&expect](const char* key) {
    const auto it = expect.metadata.find(key);
    return it == expect.metadata.end() ? std::string() : it->second;
  };
  fmt::print("validate {} {} (batch {}) against {} (torch {}{})\n\n", o.model, to_string(precision), batch, o.expect,
             metadata("torch_version").empty() ? "unknown" : metadata("torch_version"),
             metadata("engine").empty() ? "" : ", engine " + metadata("engine"));
  nlohmann::json doc = {{"schema", "convlab-validate/1"}, {"model", o.model}, {"precision", to_string(precision)},
                        {"weights", o.weights}, {"input", o.input}, {"expect", o.expect}, {"batch", batch},
                        {"torch_version", metadata("torch_version")}, {"kernels", nlohmann::json::array()}};
  if (precision == Precision::int8) doc["engine"] = metadata("engine");
  gpu::GpuRuntime* gpu = gpu_runtime(backend);  // available: checked above; null for the CPU
  bool all_pass = true;
  for (const std::string& id : kernels) {
    const KernelValidation v = quantized ? validate_int8_kernel(*quantized, input.tensors.at("input"), expect, id, gpu)
                                         : validate_kernel(net, input.tensors.at("input"), expect, id, gpu);
    std::fputs((describe(v) + "\n").c_str(), stdout);
    doc["kernels"].push_back(to_json(v));
    all_pass = all_pass && v.pass;
  }
  doc["pass"] = all_pass;
  fmt::print("{}: {} kernel(s) {}\n", o.model, kernels.size(), all_pass ? "all pass" : "FAILED");
  if (!o.json.empty()) write_file_atomically(o.json, doc.dump(2) + "\n");
  return all_pass ? kExitOk : kExitValidationFailed;
}

Command add_validate_command(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  return {add_validate_options(app, *o), [o] { return run_validate(*o); }};
}

}  // namespace convlab
