// `convlab sweep`: one model across batch sizes, model-only and end-to-end, for the batch 1 versus
// batch 32 exercise: per batch the latency distribution, per-item latency, throughput and peak
// memory, and where memory runs out.
#include "bench/commands/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/commands/measure_command.hpp"
#include "bench/harness/environment.hpp"
#include "bench/harness/interrupt.hpp"
#include "bench/harness/progress.hpp"
#include "kernels/common/error.hpp"
#include "bench/report/wording.hpp"

namespace convlab {

namespace {

struct SweepOptions {
  RunOptions run;     // batches, kernels, protocol... (the sweep's own defaults: see add_sweep_command)
  std::string modes;  // "model-only", "end-to-end" or both, comma-separated
};

}  // namespace

CLI::App* add_sweep_options(CLI::App& app, SweepOptions& o) {
  // Defaults for a lab session: one kernel (the backend's auto choice) over the exercise's batches,
  // with fewer trials than `run`, so model-only and end-to-end together take well under a minute.
  o.run.batches = "1,8,32,128";
  o.run.kernels = "auto";
  o.run.warmup = 3;
  o.run.trials = 30;
  o.modes = "model-only,end-to-end";
  CLI::App* cmd = app.add_subcommand(
      "sweep", "One model across batch sizes, model-only and end-to-end: latency, per item, throughput, memory");
  cmd->add_option("--model", o.run.model, "Network (see `convlab models`)")->capture_default_str();
  cmd->add_option("--batch", o.run.batches, "Batch sizes, comma-separated")->capture_default_str();
  cmd->add_option("--backend", o.run.backend, "cpu, cuda or metal (end-to-end: cpu only)")->capture_default_str();
  cmd->add_option("--kernel", o.run.kernels, "Kernel id(s), all, or auto (the backend's .auto)")->capture_default_str();
  cmd->add_option("--mode", o.modes, "model-only, end-to-end, or both comma-separated")->capture_default_str();
  cmd->add_option("--images", o.run.images, "End-to-end: a folder of images (default: generated 640x480 JPEGs)");
  cmd->add_option("--warmup", o.run.warmup, "Untimed runs before the trials")->capture_default_str();
  cmd->add_option("--trials", o.run.trials, "Timed runs per batch (every one is kept)")->capture_default_str();
  add_threads_option(*cmd, o.run.threads);
  add_auto_options(*cmd);
  add_precision_options(*cmd, o.run);
  cmd->add_option("--seed", o.run.seed, "Seed of the weights, the input and the generated images")->capture_default_str();
  cmd->add_option("--json", o.run.json, "Write results as JSON (schema convlab/1)");
  cmd->add_option("--csv", o.run.csv, "Write results as CSV, one row per result");
  return cmd;
}

namespace {

// Per mode and kernel: how per-item latency and throughput move from the smallest batch to the
// largest that fit, and the smallest batch that ran out of memory.
std::string sweep_summary(const std::vector<Result>& results, const ModelBenchConfig& config) {
  std::string out;
  for (const std::string mode : {"", "end-to-end"})
    for (const std::string& id : config.kernels) {
      const Result *first = nullptr, *last = nullptr;
      std::int64_t oom = 0;
      for (const Result& r : results) {
        if (r.kernel != id || r.mode != mode) continue;
        if (r.status == ResultStatus::out_of_memory && (oom == 0 || r.batch < oom)) oom = r.batch;
        if (r.status != ResultStatus::ok) continue;
        if (first == nullptr || r.batch < first->batch) first = &r;
        if (last == nullptr || r.batch > last->batch) last = &r;
      }
      if (first == nullptr && oom == 0) continue;
      out += fmt::format("{} {}:", mode.empty() ? "model-only" : mode, id);
      if (first != nullptr && last != first)
        out += fmt::format(" batch {} -> {}: latency x{:.1f}, per item {:.4f} -> {:.4f} ms, throughput x{:.1f};",
                           first->batch, last->batch, last->latency.p50 / first->latency.p50, first->per_item_ms(),
                           last->per_item_ms(), last->throughput_items_per_s() / first->throughput_items_per_s());
      if (oom != 0)
        out += fmt::format(" out of memory at batch {}{};", oom,
                           last ? fmt::format(" (largest batch that fit: {})", last->batch) : std::string());
      out.back() = '\n';
    }
  return out;
}

}  // namespace

// Exit codes as `convlab run`: 3 when some batch ran out of memory (the others are still measured).
int run_sweep(const SweepOptions& o) {
  bool model_only = false, end_to_end = false;
  for (const std::string& m : split(o.modes, ',')) {
    if (m == "model-only") model_only = true;
    else if (m == "end-to-end") end_to_end = true;
    else throw InputError(fmt::format("--mode: unknown mode '{}' (choices: model-only, end-to-end)", m));
  }
  RunOptions run = o.run;
  // The end-to-end pipeline is CPU-only for now: elsewhere the sweep is model-only, and says so.
  const bool cpu = parse_backend(run.backend) == Backend::cpu;
  if (end_to_end && !cpu) {
    fmt::print(stderr, "convlab: sweep: end-to-end runs on the CPU backend only for now; {} is swept model-only\n",
               run.backend);
    end_to_end = false;
    model_only = true;
  }
  run.end_to_end = end_to_end;
  if (!run.images.empty() && !end_to_end) throw InputError("--images: applies to the end-to-end mode only");
  const ModelBenchConfig config = model_bench_config(run);
  std::vector<ModelBenchConfig> passes;
  if (model_only) {
    passes.push_back(config);
    passes.back().images = nullptr;
  }
  if (end_to_end) passes.push_back(config);

  check_writable(run.json, run.csv);
  catch_interrupts();
  const Environment env = collect_environment();
  Peak peak = print_context(env);
  fmt::print("sweep:    {} on {}, batches {}, {}, warmup {}, {} per batch, percentiles: {} interpolation\n",
             run.model, run.backend, run.batches, o.modes, run.warmup, count_of(run.trials, "trial"),
             to_string(config.method));
  if (end_to_end) fmt::print("images:   {}\n", config.images->source);
  std::fputs(("\n" + table_header()).c_str(), stdout);
  std::vector<Result> results;
  {
    Progress progress;
    const std::size_t steps = config.kernels.size() * config.batches.size();
    for (std::size_t i = 0; i < passes.size() && !interrupted(); ++i) {
      ModelBenchConfig& pass = passes[i];
      pass.peak_gflops = peak.gflops_all;
      pass.peak_int8_gops = peak.int8_gops_all;
      const std::string what = fmt::format("sweep: {}{}", run.model, pass.images ? " end-to-end" : "");
      const auto measured = run_model_bench(pass, print_and_advance(pass, progress, what, false, i * steps, passes.size() * steps));
      results.insert(results.end(), measured.begin(), measured.end());
    }
  }
  fmt::print("\n{}", sweep_summary(results, config));
  return finish_measuring(run.json, run.csv, env, peak, results);
}

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  return {add_sweep_options(app, *o), [o] { return run_sweep(*o); }};
}

}  // namespace convlab
