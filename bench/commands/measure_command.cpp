#include "bench/commands/measure_command.hpp"

#include <algorithm>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/harness/conv_bench.hpp"
#include "bench/harness/interrupt.hpp"
#include "bench/harness/progress.hpp"
#include "bench/pipeline/end_to_end.hpp"
#include "bench/report/wording.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "models/quantized_file.hpp"
#include "models/weight_file.hpp"

namespace convlab {

ModelBenchConfig model_bench_config(const RunOptions& o) {
  if (o.warmup < 0) throw InputError(fmt::format("--warmup: {} must be 0 or more", o.warmup));
  if (o.trials < 1) throw InputError(fmt::format("--trials: {} must be at least 1", o.trials));
  if (o.fresh_processes < 0) throw InputError(fmt::format("--fresh-process: {} must be 0 or more", o.fresh_processes));
  if (!o.images.empty() && !o.end_to_end) throw InputError("--images: applies to --end-to-end runs only");
  set_threads(o.threads);
  ModelBenchConfig config;
  config.model = parse_model(o.model);
  config.backend = parse_backend(o.backend);
  config.batches = parse_batches(o.batches);
  config.protocol = {.warmup = o.warmup, .trials = o.trials, .settle_ms = settle_ms_for(o.settle_ms, o.interleave)};
  config.method = parse_percentile_method(o.percentile);
  config.seed = o.seed;
  config.weights = o.weights;
  config.per_layer = o.per_layer;
  config.cuda_graph = o.cuda_graph;
  config.fuse = !o.no_fuse;
  config.fresh_processes = o.fresh_processes;
  config.interleave = o.interleave;
  if (o.cuda_graph && config.backend != Backend::cuda) throw InputError("--cuda-graph applies to --backend cuda only");
  if (o.no_fuse && config.backend == Backend::cpu) throw InputError("--no-fuse applies to the GPU backends (cuda, metal) only");
  if (o.interleave && config.backend != Backend::cpu) throw InputError("--interleave runs on the CPU backend only for now");
  if (o.interleave && (o.end_to_end || o.fresh_processes > 0))
    throw InputError(fmt::format("--interleave times forward passes only, not with {}",
                                 o.end_to_end ? "--end-to-end" : "--fresh-process"));
  bool fp32 = false, int8 = false;
  for (const std::string& p : split(o.precisions, ',')) (parse_precision(p) == Precision::int8 ? int8 : fp32) = true;
  if (int8 && std::ranges::none_of(all_int8_kernels(), [&](const Int8KernelInfo& k) { return k.backend == config.backend; }))
    throw InputError(fmt::format("--precision int8: the {} backend has no int8 kernels", o.backend));
  if (o.calibration < 1) throw InputError(fmt::format("--calibration: {} must be at least 1", o.calibration));
  if (o.eval_inputs < 1) throw InputError(fmt::format("--eval-inputs: {} must be at least 1", o.eval_inputs));
  config.calibration_inputs = o.calibration;
  config.observer = parse_observer(o.observer);
  config.reduce_range = o.reduce_range;
  if (o.reduce_range && !o.quantized.empty())
    throw InputError("--reduce-range: applies to convlab's calibration, not to a --quantized file (its quantisation is its own)");
  config.eval_inputs = o.eval_inputs;
  config.quantized = o.quantized;
  if (!o.quantized.empty() && !int8) throw InputError("--quantized: applies to --precision int8 (or fp32,int8) runs");
  if (o.reduce_range && !int8) throw InputError("--reduce-range: applies to --precision int8 (or fp32,int8) runs");
  if (o.kernels == "all") {
    if (fp32) config.kernels = kernels_for_model(o.model, config.backend);
    if (int8)
      for (const Int8KernelInfo& k : all_int8_kernels())  // ours: each runs every layer, the oracle what it cannot
        if (k.backend == config.backend && !k.baseline) config.kernels.emplace_back(k.id);
  } else {
    // Ids of either precision; "auto": cpu.auto, and for int8 cpu.auto_int8, its int8 twin.
    for (const std::string& id : split(o.kernels == "auto" ? fmt::format("{}.auto", o.backend) : o.kernels, ',')) {
      const bool is_auto = id == fmt::format("{}.auto", o.backend);
      if (is_auto && int8) config.kernels.push_back(parse_kernel_ids(id, config.backend, Precision::int8).front());
      if (find_int8_kernel(id) != nullptr) {
        if (!int8) throw InputError(fmt::format("--kernel: {} is an int8 kernel: add --precision int8 (or fp32,int8)", id));
        parse_kernel_ids(id, config.backend, Precision::int8);
        config.kernels.push_back(id);
      } else if (fp32 || find_kernel(id) == nullptr) {
        config.kernels.push_back(parse_kernel_ids(id, config.backend).front());
      } else if (!is_auto) {
        throw InputError(fmt::format("--kernel: {} is an fp32 kernel: add --precision fp32 (or fp32,int8)", id));
      }
    }
  }
  require_backend(config.backend);
  if (config.kernels.empty())
    throw BackendUnavailable(fmt::format("backend {}: no kernel of it supports {}", o.backend, o.model));
  // A bad model, weights file or image fails now, before the environment and the table are printed.
  const Network net = load_model(config.model, o.weights, o.seed);
  if (!o.quantized.empty()) load_quantized(net, read_safetensors(o.quantized), o.quantized);
  if (o.end_to_end) {
    if (config.backend != Backend::cpu) throw InputError("--end-to-end runs on the CPU backend only for now");
    config.images = end_to_end_images(o.images, static_cast<int>(net.input_item().c()), o.seed);
  }
  return config;
}

void add_precision_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--precision", o.precisions, "fp32, int8 or fp32,int8: which kernels of --kernel run (int8: CPU and CUDA)")
      ->capture_default_str();
  cmd.add_option("--calibration", o.calibration, "int8: seeded inputs the activations' ranges are observed on")
      ->capture_default_str();
  cmd.add_option("--observer", o.observer, "int8: minmax (PyTorch's MinMaxObserver) or histogram (its HistogramObserver, "
                                            "the onednn qconfig's: outliers trimmed by an L2 search)")
      ->capture_default_str();
  cmd.add_flag("--reduce-range", o.reduce_range,
               "int8: calibrate activations over [0, 127] (PyTorch's reduce_range): without VNNI the int8 kernels then "
               "take their vpmaddubsw path, exactly, at half the levels");
  cmd.add_option("--quantized", o.quantized, "int8: the int8 model from this interchange file (convlab quantize, "
                                              "tools/export_torch.py) instead of convlab's calibration");
  cmd.add_option("--eval-inputs", o.eval_inputs, "int8: seeded inputs the prediction change against FP32 is measured on")
      ->capture_default_str();
}

std::function<void(const Result&)> print_and_advance(const ModelBenchConfig& config, Progress& progress, std::string what,
                                                     bool explain, std::size_t first_step, std::size_t total_steps) {
  const std::size_t batches = config.batches.size(), steps = config.kernels.size() * batches;
  if (total_steps == 0) total_steps = steps;
  const auto label = [=](std::size_t i) {  // i: this run's step
    if (i >= steps) return std::string();
    return fmt::format("{} {} batch {} ({}/{})", what, config.kernels[i / batches], config.batches[i % batches],
                       first_step + i + 1, total_steps);
  };
  progress.set(label(0));
  return [&progress, config, label, explain](const Result& r) {
    progress.above([&] {
      std::fputs(table_row(r).c_str(), stdout);
      if (explain)
        for (const std::string& choice : r.choices) fmt::print("    {}\n", choice);
    });
    // GPU runs give several rows per kernel x batch: the step is found, not counted.
    const auto k = std::ranges::find(config.kernels, r.kernel) - config.kernels.begin();
    const auto b = std::ranges::find(config.batches, r.batch) - config.batches.begin();
    progress.set(label(static_cast<std::size_t>(k) * config.batches.size() + static_cast<std::size_t>(b) + 1));
  };
}

namespace {
// What the flags in the rows mean: the harness's always, the rarer ones when a row shows them.
void print_flag_legend(const std::vector<Result>& results) {
  fmt::print("\nflags: p99_few_trials = under {} trials; noisy_cv = std/mean over {:.0f}%; drift = halves' medians"
             " differ over {:.0f}%\n", kMinTrialsForP99, kMaxCv * 100, kMaxDrift * 100);
  const auto any = [&results](auto&& shows) { return std::ranges::any_of(results, shows); };
  if (any([](const Result& r) { return r.accuracy && r.accuracy->sampled; }))
    fmt::print("       sampled-check = the outputs were checked against the oracle on an even sample of {} (the "
               "problem has over {:.0f} GFLOP: the oracle would take minutes), not every one\n",
               kSampledOutputs, kFullCheckMaxFlops / 1e9);
  if (any([](const Result& r) { return r.effective_flops; }))
    fmt::print("       effective_flops = GFLOP/s and %peak count the direct convolution's FLOPs, but the kernel (Winograd) "
               "does fewer multiplies: an effective rate, which can pass the machine's peak\n");
  if (any([](const Result& r) { return r.on_one_thread; }))
    fmt::print("       on_1_thread = cpu.auto ran this forward on one thread, measured faster than on all of them "
               "(--explain: the two times)\n");
  if (any([](const Result& r) { return !r.mistrusted.empty(); }))
    fmt::print("       mistrusted = the outputs match the oracle but prove little (a constant output); the row says why\n");
  if (any([](const Result& r) { return r.measurement.peak_rss_is_process_lifetime; }))
    fmt::print("       peak_rss_is_process_lifetime = peak MiB is the process's high-water mark, not this row's\n");
  if (any([](const Result& r) { return r.stages.has_value(); }))
    fmt::print("       end-to-end rows show no GFLOP/s or %peak: their time includes decoding and preprocessing\n");
}
}  // namespace

void check_writable(const std::string& json, const std::string& csv) {
  for (const std::string& path : {json, csv})
    if (!path.empty()) check_writable(path);
}

Peak print_context(const Environment& env) {
  const Peak peak = measure_peak(/*quick=*/true);
  std::fputs(describe(env).c_str(), stdout);
  fmt::print("peak:     {:.1f} GFLOP/s FP32 FMA on {} (measured now; `convlab peak` for the full measurement)\n",
             peak.gflops_all, count_of(peak.threads, "thread"));
  if (peak.int8_gops_all > 0)
    fmt::print("          {:.1f} GOP/s int8: {} (the % of peak of int8 rows)\n", peak.int8_gops_all, peak.int8_instruction);
  return peak;
}

std::string peak_drift_warning(double again, double start, const std::string& unit, const std::string& rows) {
  if (start <= 0 || again <= 0) return {};
  if (const double excess = again / start - 1; excess > 0.1)
    return fmt::format("peak:     {:.1f} {} measured again after the runs, {:.0f}% above the {:.1f} at the start: the\n"
                       "          machine was busier then, and the % of peak of {} above is up to {:.0f}% too high\n",
                       again, unit, 100 * excess, start, rows, 100 * excess);
  // Below: the rows between the two probes may have met the busier machine too; only they
  // could say how much, so the bound is the probes' ratio.
  if (const double shortfall = 1 - again / start; shortfall > 0.1)
    return fmt::format("peak:     {:.1f} {} measured again after the runs, {:.0f}% below the {:.1f} at the start: the\n"
                       "          machine grew busier (or the start read high), and the % of peak of {} above may be\n"
                       "          up to {:.0f}% too low\n",
                       again, unit, 100 * shortfall, start, rows, 100 * (start / again - 1));
  return {};
}

int finish_measuring(const std::string& json, const std::string& csv, const Environment& env, Peak& peak,
                     const std::vector<Result>& results) {
  const Peak after = measure_peak(/*quick=*/true);
  peak.gflops_all_after = after.gflops_all;
  fmt::print("{}", peak_drift_warning(peak.gflops_all_after, peak.gflops_all, "GFLOP/s", "FP32 rows"));
  // The short int8 probe reads low more often than the FMA one (490-870 GOP/s where `convlab
  // peak` reads 1040, 2-core Ice Lake VM): int8 rows get the same check.
  if (std::ranges::any_of(results, [](const Result& r) { return r.precision == Precision::int8; }) && peak.int8_gops_all > 0) {
    peak.int8_gops_all_after = after.int8_gops_all;
    fmt::print("{}", peak_drift_warning(peak.int8_gops_all_after, peak.int8_gops_all, "GOP/s int8", "int8 rows"));
  }
  print_flag_legend(results);
  // The per-layer roofline's memory roof; measured after the rows, so that its arrays never count
  // in a row's resident memory
  if (peak.read_gbs == 0 && std::ranges::any_of(results, [](const Result& r) { return !r.layer_times.empty(); })) {
    measure_bandwidth(peak);
    fmt::print("peak:     {:.1f} GB/s read bandwidth on {} (the per-layer roofline's memory roof)\n", peak.read_gbs,
               count_of(peak.threads, "thread"));
  }
  const bool complete = !interrupted();
  const std::string note = fmt::format("interrupted by SIGINT: only the {} finished {} written",
                                        count_of(static_cast<std::int64_t>(results.size()), "result"),
                                        results.size() == 1 ? "is" : "are");
  if (!json.empty()) {
    nlohmann::json doc = results_document(env, &peak, results);
    doc["complete"] = complete;
    if (!complete) doc["note"] = note;
    write_file_atomically(json, doc.dump(2) + "\n");
  }
  if (!csv.empty()) {
    std::string rows = csv_header();
    for (const Result& r : results) rows += csv_row(r);
    if (!complete) rows += "# incomplete: " + note + "\n";  // a comment line: pandas' comment='#' skips it
    write_file_atomically(csv, rows);
  }
  if (!complete) {
    fmt::print(stderr, "convlab: {}{}\n", note, json.empty() && csv.empty() ? "" : " (files marked incomplete)");
    return kExitInterrupted;
  }
  for (const Result& r : results)
    if (r.status == ResultStatus::invalid) return kExitValidationFailed;
  for (const Result& r : results)
    if (r.status != ResultStatus::ok) return kExitPartial;
  return kExitOk;
}

}  // namespace convlab
