// `convlab quantize`: a network's int8 interchange file (models/quantized_file.hpp) from convlab's
// own calibration, so that a user without PyTorch can quantise too; `run --quantized` reads it.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/commands/commands.hpp"
#include "bench/harness/int8_model_bench.hpp"
#include "kernels/common/error.hpp"
#include "models/quantized_file.hpp"
#include "models/weight_file.hpp"

namespace convlab {

namespace {

struct QuantizeOptions {
  std::string model = "lab-cnn", weights, out, images;
  int calibration = 32;
  std::string observer = "minmax";
  bool reduce_range = false;
  std::uint64_t seed = 1;
  CLI::Option* calibration_option = nullptr;
  bool calibration_given = false;
};

int run_quantize(const QuantizeOptions& o) {
  if (o.out.empty()) throw InputError("quantize needs -o FILE: where to write the int8 model");
  if (o.calibration < 1) throw InputError(fmt::format("--calibration: {} must be at least 1", o.calibration));
  if (o.calibration_given && !o.images.empty())
    throw InputError("--calibration and --images: calibrate on seeded inputs or on the images, not both");
  ModelBenchConfig config;
  config.model = parse_model(o.model);
  const Network net = load_model(config.model, o.weights, o.seed);
  config.seed = o.seed;
  config.calibration_inputs = o.calibration;
  config.observer = parse_observer(o.observer);
  config.reduce_range = o.reduce_range;
  config.calibration_images = o.images;
  const QuantizedNetwork q = quantize_for_run(config, net);
  TensorFile file = quantized_tensors(q);
  file.metadata["weights"] = o.weights.empty() ? fmt::format("seeded ({})", o.seed) : o.weights;
  write_safetensors(o.out, file);
  fmt::print("{}: {} tensors, {} ({}), written to {}\n", config.model, file.tensors.size(),
             fmt::format("{:.1f} KiB of parameters", q.parameter_bytes() / 1024.0), q.source(), o.out);
  return kExitOk;
}

}  // namespace

Command add_quantize_command(CLI::App& app) {
  auto o = std::make_shared<QuantizeOptions>();
  CLI::App* cmd = app.add_subcommand("quantize", "Quantise a network to int8 with convlab's calibration; write the interchange file");
  cmd->add_option("--model", o->model, "Network to quantise (see `convlab models`)")->capture_default_str();
  cmd->add_option("--weights", o->weights, "FP32 weights from a safetensors state_dict (default: seeded)");
  o->calibration_option = cmd->add_option("--calibration", o->calibration, "Seeded inputs the activations' ranges are observed on")
      ->capture_default_str();
  cmd->add_option("--images", o->images, "Calibrate on every image of this folder instead (decoded, resized, normalised "
                                         "as the end-to-end pipeline does)");
  cmd->add_option("--observer", o->observer, "minmax (PyTorch's MinMaxObserver) or histogram (its HistogramObserver)")
      ->capture_default_str();
  cmd->add_flag("--reduce-range", o->reduce_range,
                "Activations over [0, 127] (PyTorch's reduce_range): without VNNI the int8 kernels then take their "
                "vpmaddubsw path, exactly, at half the levels");
  cmd->add_option("--seed", o->seed, "Seed of the weights (without --weights) and the calibration inputs")
      ->capture_default_str();
  cmd->add_option("-o,--out", o->out, "The int8 safetensors file to write");
  return {cmd, [o] {
            o->calibration_given = o->calibration_option->count() > 0;
            return run_quantize(*o);
          }};
}

}  // namespace convlab
