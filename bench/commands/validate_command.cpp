// The `convlab validate` subcommand: its options and what it runs (bench/check/validate.hpp does the
// comparing).
#include "bench/commands/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "bench/check/validate.hpp"
#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/report/results.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "models/weight_file.hpp"

namespace convlab {

namespace {

struct ValidateOptions {
  std::string model, weights, input, expect;
  std::string backend = "cpu";
  std::string kernels = "all";
  std::string json;
  int threads = 0;
};

}  // namespace

CLI::App* add_validate_options(CLI::App& app, ValidateOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "validate", "Check a model's every layer against PyTorch's outputs (files from tools/export_torch.py)");
  cmd->add_option("--model", o.model, "Network (see `convlab models`)")->required();
  cmd->add_option("--weights", o.weights, "weights.safetensors: the PyTorch state_dict")->required();
  cmd->add_option("--input", o.input, "input.safetensors: tensor `input`, N x C x H x W")->required();
  cmd->add_option("--expect", o.expect, "expect.safetensors: `output` and each layer's output")->required();
  cmd->add_option("--backend", o.backend, "cpu, cuda or metal")->capture_default_str();
  cmd->add_option("--kernel", o.kernels, "Kernel id(s), comma-separated, or all")->capture_default_str();
  add_threads_option(*cmd, o.threads);
  add_auto_options(*cmd);
  cmd->add_option("--json", o.json, "Write the comparison as JSON");
  return cmd;
}

// Exit 0 when every kernel passes, 1 when any fails; throws InputError for bad usage (exit 2).
int run_validate(const ValidateOptions& o) {
  set_threads(o.threads);
  const ModelInfo& model = parse_model(o.model);
  const Backend backend = parse_backend(o.backend);

  const Network net = load_network(model, o.weights);
  const TensorFile input = read_safetensors(o.input), expect = read_safetensors(o.expect);
  check_reference(net, input, expect);
  const std::vector<std::string> covering = kernels_covering(net, backend);
  std::vector<std::string> kernels;
  if (o.kernels == "all") {
    kernels = covering;
  } else {
    kernels = parse_kernel_ids(o.kernels, backend);
    for (const std::string& id : kernels) {
      if (std::ranges::find(covering, id) == covering.end())
        throw InputError(fmt::format("--kernel: {} supports no conv layer of {}", id, o.model));
    }
  }
  require_backend(backend);
  if (!o.json.empty()) check_writable(o.json);  // a bad path fails now, not after the runs

  const auto torch = expect.metadata.find("torch_version");
  fmt::print("validate {} (batch {}) against {} (torch {})\n\n", o.model, input.tensors.at("input").shape[0], o.expect,
             torch == expect.metadata.end() ? "unknown" : torch->second);
  nlohmann::json doc = {{"schema", "convlab-validate/1"}, {"model", o.model}, {"weights", o.weights},
                        {"input", o.input}, {"expect", o.expect}, {"batch", input.tensors.at("input").shape[0]},
                        {"torch_version", torch == expect.metadata.end() ? "" : torch->second},
                        {"kernels", nlohmann::json::array()}};
  gpu::GpuRuntime* gpu = gpu_runtime(backend);  // available: checked above; null for the CPU
  bool all_pass = true;
  for (const std::string& id : kernels) {
    const KernelValidation v = validate_kernel(net, input.tensors.at("input"), expect, id, gpu);
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
