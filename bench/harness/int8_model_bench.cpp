#include "bench/harness/int8_model_bench.hpp"

#include <omp.h>

#include <new>

#include <fmt/format.h>

#include "bench/check/quantization_effect.hpp"
#include "bench/harness/forward_threads.hpp"
#include "bench/harness/memory.hpp"
#include "bench/harness/per_layer.hpp"
#include "bench/pipeline/image.hpp"
#include "bench/pipeline/preprocess.hpp"
#include "models/quantized_file.hpp"

namespace convlab {

namespace {
// seeded_inputs streams, apart from each other and from the timed input's (0).
constexpr std::uint64_t kCalibrationStream = 1000, kEvaluationStream = 2000;
}  // namespace

QuantizedNetwork quantize_for_run(const ModelBenchConfig& config, const Network& net) {
  if (!config.quantized.empty()) return load_quantized(net, read_safetensors(config.quantized), config.quantized);
  const std::string observer = fmt::format("{}{}", config.observer == Observer::histogram ? "histogram" : "min/max",
                                          config.reduce_range ? " (7-bit activations, reduce_range)" : "");
  const std::int32_t quant_max = config.reduce_range ? kReducedQuantMax : kQuantMax;
  if (!config.calibration_images.empty()) {
    const ImageSet images = load_images(config.calibration_images, static_cast<int>(net.input_item().c()));
    return QuantizedNetwork(net, preprocess_all(images, net.input_item()),
                            fmt::format("{} calibration on {} images of {}", observer, images.images.size(),
                                        config.calibration_images),
                            config.observer, quant_max);
  }
  return QuantizedNetwork(net, seeded_inputs(net, config.calibration_inputs, config.seed, kCalibrationStream),
                          fmt::format("{} calibration on {} seeded inputs", observer, config.calibration_inputs),
                          config.observer, quant_max);
}

std::vector<std::string> quantization_arguments(const ModelBenchConfig& config) {
  if (!config.quantized.empty()) return {"--quantized", config.quantized};
  const ModelBenchConfig defaults;
  std::vector<std::string> args;
  if (config.calibration_inputs != defaults.calibration_inputs)
    args.insert(args.end(), {"--calibration", std::to_string(config.calibration_inputs)});
  if (config.observer == Observer::histogram) args.insert(args.end(), {"--observer", "histogram"});
  if (config.reduce_range) args.emplace_back("--reduce-range");
  return args;
}

std::string quantization_options(const ModelBenchConfig& config) {
  return fmt::format("{}", fmt::join(quantization_arguments(config), " "));
}

QuantizationEffect quantization_effect_for_run(const ModelBenchConfig& config, const QuantizedNetwork& q) {
  return measure_quantization_effect(q, seeded_inputs(q.network(), config.eval_inputs, config.seed, kEvaluationStream),
                                     "cpu.20_int8_reference");
}

PlannedModelRow plan_int8_row(const ModelBenchConfig& config, const QuantizedNetwork& q, const std::string& id,
                              std::int64_t batch) {
  const Network& net = q.network();
  PlannedModelRow row{.result = model_row(config, net, id, batch)};
  const PlannedInt8Forward planned = plan_int8_forward(q, config.model, batch, id, config.seed);
  const std::shared_ptr<Int8NetworkPlan>& plan = planned.plan;
  Result& r = row.result;
  r.on_one_thread = planned.threads < omp_get_max_threads();
  r.model_memory = plan->memory();
  for (std::size_t i = 0; i < net.layers().size(); ++i)
    if (std::string why = plan->explain(static_cast<int>(i)); !why.empty())
      r.choices.push_back(fmt::format("{}: {}", net.layers()[i].name, why));
    else if (!plan->kernel_ids()[i].empty() && plan->kernel_ids()[i] != id)
      r.choices.push_back(fmt::format("{}: {} (the layer {} does not support)", net.layers()[i].name,
                                      plan->kernel_ids()[i], id));
  if (!planned.why.empty()) r.choices.push_back("forward: " + planned.why);
  // End-to-end: the images go into the FP32 input, which the int8 forward quantises.
  row.input = plan->input().span();
  row.forward = [planned] { planned.forward(); };
  row.finish = [planned, &q, &config, &net, batch](Result& r) {
    const cpu::ScopedMaxThreads scope(planned.threads);  // the profile and the check too
    const std::shared_ptr<Int8NetworkPlan>& plan = planned.plan;
    r.latency = summarize(r.measurement.samples_ms, config.method);
    if (config.per_layer) r.layer_times = profile_layers(*plan, net, config.protocol);
    // Ours compute the oracle's arithmetic: the same bytes, or the row is invalid.
    Int8NetworkPlan oracle(q, batch, std::string(kInt8Oracle));
    std::copy(plan->input().data(), plan->input().data() + plan->input().elems(), oracle.input().data());
    oracle.forward();
    for (std::size_t i = 0; i < net.layers().size() && r.error.empty(); ++i)
      if (plan->dequantized(static_cast<int>(i)) != oracle.dequantized(static_cast<int>(i))) {
        r.status = ResultStatus::invalid;
        r.error = fmt::format("INVALID: layer {} differs from cpu.20_int8_reference's", net.layers()[i].name);
      }
  };
  return row;
}

}  // namespace convlab
