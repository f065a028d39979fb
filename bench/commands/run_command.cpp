// `convlab run` (a model, chosen kernels, several batch sizes) and `convlab` alone, the teaching
// lab: the same measurement, the lab adding its batch 1 versus batch 32 summary.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/commands/commands.hpp"
#include "bench/commands/measure_command.hpp"
#include "bench/harness/interrupt.hpp"
#include "bench/harness/progress.hpp"
#include "bench/report/wording.hpp"

namespace convlab {

namespace {

// The lab's lesson in one line per kernel: what batch 32 costs in latency and buys in throughput.
void print_teaching_summary(const ModelBenchConfig& config, const std::vector<Result>& results) {
  for (const std::string& id : config.kernels) {
    const Result *one = nullptr, *many = nullptr;
    for (const Result& r : results)
      if (r.kernel == id && r.status == ResultStatus::ok) (r.batch == 1 ? one : many) = &r;
    if (one != nullptr && many != nullptr)
      fmt::print("\n{}: batch {} takes {:.1f}x the latency of batch 1 but serves {:.1f}x the items per second"
                 " ({:.4f} vs {:.4f} ms per item).",
                 id, many->batch, many->latency.p50 / one->latency.p50,
                 many->throughput_items_per_s() / one->throughput_items_per_s(), many->per_item_ms(),
                 one->per_item_ms());
  }
  fmt::print("\n");
}

// int8 against FP32, both measured in this run: size, speed per batch, prediction change.
void print_precision_summary(const std::vector<Result>& results) {
  const auto effect = std::ranges::find_if(results, [](const Result& r) { return r.quantization.has_value(); });
  if (effect == results.end()) return;
  fmt::print("\n{}", describe(*effect->quantization));
  std::map<std::int64_t, std::pair<const Result*, const Result*>> best;  // batch -> fastest fp32, fastest int8
  for (const Result& r : results) {
    if (r.status != ResultStatus::ok || is_oracle(r.kernel)) continue;
    const Result*& slot = r.precision == Precision::int8 ? best[r.batch].second : best[r.batch].first;
    if (slot == nullptr || r.latency.p50 < slot->latency.p50) slot = &r;
  }
  for (const auto& [batch, pair] : best)
    if (pair.first != nullptr && pair.second != nullptr)
      fmt::print("batch {}: int8 {} {:.3f} ms vs fp32 {} {:.3f} ms: {:.2f}x\n", batch, pair.second->kernel,
                 pair.second->latency.p50, pair.first->kernel, pair.first->latency.p50,
                 pair.first->latency.p50 / pair.second->latency.p50);
}

int run_model_command(const RunOptions& o, bool teaching_summary) {
  ModelBenchConfig config = model_bench_config(o);
  check_writable(o.json, o.csv);
  catch_interrupts();
  const Environment env = collect_environment();
  Peak peak = print_context(env);
  config.peak_gflops = peak.gflops_all;
  config.peak_int8_gops = peak.int8_gops_all;
  fmt::print("model:    {} on {}, warmup {}, {} per batch, percentiles: {} interpolation\n\n", o.model, o.backend,
             o.warmup, count_of(o.trials, "trial"), to_string(config.method));
  std::fputs(table_header().c_str(), stdout);
  std::vector<Result> results;
  {
    Progress progress;
    results = run_model_bench(config, print_and_advance(config, progress, fmt::format("run: {}", o.model), o.explain));
  }
  if (teaching_summary) print_teaching_summary(config, results);
  print_precision_summary(results);
  for (const Result& r : results)
    if (!r.layer_times.empty())
      fmt::print("\nper layer: {} with {} at batch {} (median of {} timed passes; share of their sum)\n{}", o.model,
                 r.kernel, r.batch, o.trials, describe(r.layer_times));
  return finish_measuring(o.json, o.csv, env, peak, results);
}

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--model", o.model, "Network to run (see `convlab models`)")->capture_default_str();
  cmd.add_option("--backend", o.backend, "cpu, cuda or metal")->capture_default_str();
  cmd.add_option("--kernel", o.kernels, "Kernel id(s), comma-separated, or all (see `convlab kernels`)")
      ->capture_default_str();
  cmd.add_option("--batch", o.batches, "Batch sizes, comma-separated")->capture_default_str();
  cmd.add_option("--warmup", o.warmup, "Untimed runs before the trials")->capture_default_str();
  cmd.add_option("--trials", o.trials, "Timed runs per batch (every one is kept)")->capture_default_str();
  add_threads_option(cmd, o.threads);
  add_auto_options(cmd);
  cmd.add_option("--percentile", o.percentile, "Percentile method: linear (numpy's default) or nearest-rank")
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "Seed of the deterministic weights and input")->capture_default_str();
  cmd.add_option("--weights", o.weights, "Weights from a safetensors state_dict (default: seeded)");
  cmd.add_flag("--per-layer", o.per_layer, "Also time each layer: median and share of the forward pass");
  cmd.add_option("--json", o.json, "Write results as JSON (schema convlab/1)");
  cmd.add_option("--csv", o.csv, "Write results as CSV, one row per result");
  cmd.add_flag("--explain", o.explain, "Print what cpu.auto / cuda.auto chose for each layer (and why)");
  cmd.add_flag("--cuda-graph", o.cuda_graph, "CUDA: also time the forward captured once as a CUDA Graph and replayed");
  cmd.add_flag("--no-fuse", o.no_fuse,
               "GPU: run every layer apart (no conv + residual add / pool fusion), to measure what fusion saves");
  cmd.add_flag("--end-to-end", o.end_to_end, "Time decode + preprocess + forward per batch, and each stage (CPU)");
  cmd.add_option("--images", o.images, "With --end-to-end: a folder of images (default: generated 640x480 JPEGs)");
  cmd.add_option("--fresh-process", o.fresh_processes,
                 "Also time N new processes' first forward, from process start to result (CPU)");
  cmd.add_flag("--interleave", o.interleave,
               "CPU: time a batch's rows (every kernel and precision) together, one forward of each per round, "
               "so a busy spell falls on all of them");
  add_settle_option(cmd, o.settle_ms);
  add_precision_options(cmd, o);
}

}  // namespace

Command add_lab_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  o->warmup = 8;
  o->trials = 60;
  o->batches = "1,32";
  add_threads_option(app, o->threads, "CPU threads for the default lab (default: all cores)");
  add_auto_options(app);
  // Fewer for a quick look, or where time means nothing (an emulated ARM64 build in CI).
  app.add_option("--warmup", o->warmup, "Untimed runs per batch in the default lab")->capture_default_str();
  app.add_option("--trials", o->trials, "Timed runs per batch in the default lab")->capture_default_str();
  return {&app, [o] { return run_model_command(*o, /*teaching_summary=*/true); }};
}

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Time a model with chosen kernels at several batch sizes");
  add_run_options(*cmd, *o);
  return {cmd, [o] { return run_model_command(*o, /*teaching_summary=*/false); }};
}

}  // namespace convlab
