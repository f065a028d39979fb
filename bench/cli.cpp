#include "bench/cli.hpp"

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_args.hpp"
#include "bench/conv_bench.hpp"
#include "bench/interrupt.hpp"
#include "bench/fresh_process.hpp"
#include "bench/lab.hpp"
#include "bench/lab_command.hpp"
#include "bench/progress.hpp"
#include "bench/sweep_command.hpp"
#include "bench/compare_command.hpp"
#include "bench/policy_command.hpp"
#include "bench/report_command.hpp"
#include "bench/validate_command.hpp"
#include "bench/peak.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/weight_file.hpp"

namespace convlab {

namespace {

// Shared by `convlab` (the default lab) and `convlab run`.
int run_lab_command(const RunOptions& o, bool teaching_summary) {
  std::optional<LabConfig> maybe = lab_config(o);
  if (!maybe) return kExitOk;
  LabConfig& config = *maybe;
  check_writable(o.json, o.csv);
  catch_interrupts();
  const Environment env = collect_environment();
  Peak peak = print_context(env);
  config.peak_gflops = peak.gflops_all;
  fmt::print("model:    {} on {}, warmup {}, {} trials per batch, percentiles: {} interpolation\n\n", o.model,
             o.backend, o.warmup, o.trials, to_string(config.method));
  std::fputs(table_header().c_str(), stdout);
  std::vector<Result> results;
  {
    Progress progress;
    results = run_lab(config, print_and_advance(config, progress, fmt::format("run: {}", o.model), o.explain));
  }

  if (teaching_summary) {
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
  for (const Result& r : results)
    if (!r.layer_times.empty())
      fmt::print("\nper layer: {} with {} at batch {} (median of {} timed passes; share of their sum)\n{}", o.model,
                 r.kernel, r.batch, o.trials, describe(r.layer_times));
  return finish_measuring(o.json, o.csv, env, peak, results);
}

struct ConvOptions {
  std::string problem, problems_file;
  std::string backend = "cpu";
  std::string batches;  // empty: each descriptor's mb
  std::string kernels = "all";
  int warmup = 10;
  int trials = 50;
  int threads = 0;
  std::string percentile = "linear";
  std::uint64_t seed = 1;
  bool interleave = false;
  std::string json, csv;
};

int conv_command(const ConvOptions& o) {
  if (o.warmup < 0) throw InputError(fmt::format("--warmup: {} must be 0 or more", o.warmup));
  if (o.trials < 1) throw InputError(fmt::format("--trials: {} must be at least 1", o.trials));
  if (o.problem.empty() == o.problems_file.empty())
    throw InputError("conv needs exactly one of --problem DESCRIPTOR or --problems FILE");
  set_threads(o.threads);
  ConvBenchConfig config;
  config.problems = o.problem.empty() ? read_problems(o.problems_file)
                                      : std::vector<NamedProblem>{{parse_problem(o.problem), ""}};
  if (!o.batches.empty()) config.batches = parse_batches(o.batches);
  config.backend = parse_backend(o.backend);
  if (o.kernels != "all") config.kernels = parse_kernel_ids(o.kernels, config.backend);
  if (const BackendStatus status = backend_status(config.backend); !status.available) {
    fmt::print(stderr, "convlab: skipping backend {}: {}\n", o.backend, status.detail);
    return kExitOk;
  }
  config.protocol = {.warmup = o.warmup, .trials = o.trials};
  config.interleave = o.interleave;
  config.method = parse_percentile_method(o.percentile);
  config.seed = o.seed;
  check_writable(o.json, o.csv);
  const Environment env = collect_environment();
  Peak peak = print_context(env);
  config.peak_gflops = peak.gflops_all;
  fmt::print("protocol: warmup {}, {} trials{}, outputs checked against cpu.00_reference before timing\n", o.warmup,
             o.trials, o.interleave ? ", a problem's kernels interleaved trial by trial" : "");
  catch_interrupts();
  std::vector<Result> results;
  try {
    for (const NamedProblem& np : config.problems) {
      ConvBenchConfig one = config;
      one.problems = {np};
      const std::vector<std::int64_t> batches = config.batches.empty() ? std::vector{np.problem.n} : config.batches;
      for (const std::int64_t batch : batches) {
        one.batches = {batch};
        const auto measured = run_conv_bench(one, {});
        std::fputs(conv_table_block(np, batch, measured).c_str(), stdout);
        std::fflush(stdout);
        results.insert(results.end(), measured.begin(), measured.end());
      }
    }
  } catch (const Interrupted&) {  // the problem in progress is dropped; finish_measuring marks the rest
  }
  if (const std::string summary = best_versus_onednn_summary(results); !summary.empty())
    fmt::print("\n{}", summary);
  return finish_measuring(o.json, o.csv, env, peak, results);
}

int peak_command(int threads) {
  set_threads(threads);
  const Peak p = measure_peak(/*quick=*/false);
  fmt::print("FP32 FMA peak ({} lanes per SIMD register, this build's ISA):\n"
             "  1 thread:   {:8.1f} GFLOP/s\n"
             "  {} threads: {:8.1f} GFLOP/s\n",
             p.simd_lanes, p.gflops_one, p.threads, p.gflops_all);
  fmt::print("cpu.02's register tiles (3x3 taps) on L1-resident data, the ceiling of a direct kernel:\n");
  for (const TileCeiling& t : p.tiles)
    fmt::print("  {} x {:<2} 1 thread: {:6.1f} GFLOP/s ({:3.0f}% of the FMA peak)   {} threads: {:6.1f} ({:3.0f}%)\n",
               t.k_blocks, t.pixels, t.gflops_one, 100 * t.gflops_one / p.gflops_one, p.threads, t.gflops_all,
               100 * t.gflops_all / p.gflops_all);
  fmt::print("memory bandwidth ({} threads, 256 MiB arrays):\n"
             "  read:       {:8.1f} GB/s\n"
             "  triad:      {:8.1f} GB/s (a = b + s c, 12 bytes per element)\n"
             "best of 5 repetitions each; machine balance {:.1f} FLOP per byte read\n",
             p.threads, p.read_gbs, p.triad_gbs, p.gflops_all / p.read_gbs);
  return kExitOk;
}

int list_kernels() {
  fmt::print("{:<28} {:<7} {:<9} {:<12} {:<14} {}\n", "id", "backend", "kind", "available", "deterministic", "summary");
  for (const KernelInfo& k : all_kernels()) {
    const BackendStatus status = backend_status(k.backend);
    const char* available = status.available ? "yes" : k.backend == Backend::metal ? "needs macOS" : "no device";
    fmt::print("{:<28} {:<7} {:<9} {:<12} {:<14} {}\n", k.id, to_string(k.backend), k.baseline ? "baseline" : "ours",
               available, k.deterministic ? "yes" : "no", k.summary);
  }
  for (Backend b : {Backend::cuda, Backend::metal})
    if (const BackendStatus s = backend_status(b); !s.available) fmt::print("{}: {}\n", to_string(b), s.detail);
  return kExitOk;
}

int list_models() {
  fmt::print("{:<16} {:<10} {:>10} {:>14} {:>7}  {}\n", "model", "input", "params", "MFLOP/item", "layers", "summary");
  for (const ModelInfo& m : all_models()) {
    const Network net = m.build(seeded_weights(1));
    const Shape in = net.input_item();
    fmt::print("{:<16} {:<10} {:>10} {:>14.2f} {:>7}  {}\n", m.name, fmt::format("{}x{}x{}", in.c(), in.h(), in.w()),
               net.parameter_count(), net.flops_per_item() / 1e6, net.layers().size(), m.summary);
  }
  return kExitOk;
}

int measure_overhead(int trials) {
  if (trials < 1) throw InputError(fmt::format("--trials: {} must be at least 1", trials));
  CpuDevice device;
  SteadyClock clock;
  const Measurement m = measure([] {}, device, {.warmup = 1000, .trials = trials}, clock);
  const Summary s = summarize(m.samples_ms);
  fmt::print("harness overhead per trial (empty workload on the cpu device, {} trials):\n"
             "  p50 {:.0f} ns, p90 {:.0f} ns, p99 {:.0f} ns, mean {:.1f} ns, min {:.0f} ns\n"
             "  (two steady_clock reads, two synchronizations and one call; target <= 100 ns at p50)\n",
             trials, s.p50 * 1e6, s.p90 * 1e6, s.p99 * 1e6, s.mean * 1e6, s.min * 1e6);
  return kExitOk;
}

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--model", o.model, "Network to run (see `convlab models`)")->capture_default_str();
  cmd.add_option("--backend", o.backend, "cpu, cuda or metal")->capture_default_str();
  cmd.add_option("--kernel", o.kernels, "Kernel id(s), comma-separated, or all (see `convlab kernels`)")
      ->capture_default_str();
  cmd.add_option("--batch", o.batches, "Batch sizes, comma-separated")->capture_default_str();
  cmd.add_option("--warmup", o.warmup, "Untimed runs before the trials")->capture_default_str();
  cmd.add_option("--trials", o.trials, "Timed runs per batch (every one is kept)")->capture_default_str();
  cmd.add_option("--threads", o.threads, "CPU threads (default: all cores)");
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
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"convlab: a laboratory for convolution kernels and inference latency.\n"
               "With no command, runs the default lab: lab-cnn on the CPU at batch 1 and 32."};
  app.require_subcommand(0, 1);
  RunOptions lab_options;
  lab_options.warmup = 8;
  lab_options.trials = 60;
  lab_options.batches = "1,32";
  app.add_option("--threads", lab_options.threads, "CPU threads for the default lab (default: all cores)");

  RunOptions run_options;
  CLI::App* run = app.add_subcommand("run", "Time a model with chosen kernels at several batch sizes");
  add_run_options(*run, run_options);
  ValidateOptions validate_options;
  CLI::App* validate = add_validate_command(app, validate_options);
  ReportOptions report_options;
  CLI::App* report = add_report_command(app, report_options);
  CompareOptions compare_options;
  CLI::App* compare = add_compare_command(app, compare_options);
  PolicyOptions policy_options;
  CLI::App* policy = add_policy_command(app, policy_options);
  CLI::App* kernels = app.add_subcommand("kernels", "List the kernels: id, backend, available here, summary");
  CLI::App* models = app.add_subcommand("models", "List the networks");
  CLI::App* env = app.add_subcommand("env", "Describe this machine and build");
  bool env_json = false;
  env->add_flag("--json", env_json, "Print the report context as JSON");
  ConvOptions conv_options;
  CLI::App* conv = app.add_subcommand("conv", "Time single convolutions: every kernel, checked, against oneDNN");
  conv->add_option("--problem", conv_options.problem, "A benchdnn descriptor, e.g. mb32ic64ih56oc64oh56kh3ph1");
  conv->add_option("--problems", conv_options.problems_file, "A file of descriptors, one per line, role after it");
  conv->add_option("--batch", conv_options.batches, "Batch sizes overriding the descriptors' mb, comma-separated");
  conv->add_option("--backend", conv_options.backend, "cpu or cuda: whose kernels run")->capture_default_str();
  conv->add_option("--kernel", conv_options.kernels, "Kernel id(s) of that backend, comma-separated, or all")
      ->capture_default_str();
  conv->add_option("--warmup", conv_options.warmup, "Untimed runs before the trials")->capture_default_str();
  conv->add_option("--trials", conv_options.trials, "Timed runs per kernel")->capture_default_str();
  conv->add_option("--threads", conv_options.threads, "CPU threads (default: all cores)");
  conv->add_option("--percentile", conv_options.percentile, "linear or nearest-rank")->capture_default_str();
  conv->add_option("--seed", conv_options.seed, "Seed of the input and weights")->capture_default_str();
  conv->add_flag("--interleave", conv_options.interleave,
                 "Time a problem's kernels together, one trial of each per round, so a busy spell falls on all of them");
  conv->add_option("--json", conv_options.json, "Write results as JSON (schema convlab/1)");
  conv->add_option("--csv", conv_options.csv, "Write results as CSV");
  SweepOptions sweep_options;
  CLI::App* sweep = add_sweep_command(app, sweep_options);
  FreshChildOptions child_options;
  CLI::App* child = add_fresh_child_command(app, child_options);
  int peak_threads = 0;
  CLI::App* peak = app.add_subcommand("peak", "Measure this machine's FP32 FMA peak and memory bandwidth");
  peak->add_option("--threads", peak_threads, "CPU threads (default: all cores)");
  int overhead_trials = 100000;
  CLI::App* overhead = app.add_subcommand("overhead", "Measure the harness's own cost per trial");
  overhead->add_option("--trials", overhead_trials, "Empty trials to time")->capture_default_str();

  try {
    app.parse(argc, argv);
    if (*run) return run_lab_command(run_options, false);
    if (*validate) return run_validate(validate_options);
    if (*sweep) return run_sweep(sweep_options);
    if (*child) return run_fresh_child(child_options);
    if (*report) return run_report(report_options);
    if (*compare) return run_compare(compare_options);
    if (*policy) return run_policy(policy_options);
    if (*conv) return conv_command(conv_options);
    if (*peak) return peak_command(peak_threads);
    if (*kernels) return list_kernels();
    if (*models) return list_models();
    if (*env) {
      const Environment e = collect_environment();
      std::fputs(env_json ? (to_json(e).dump(2) + "\n").c_str() : describe(e).c_str(), stdout);
      return kExitOk;
    }
    if (*overhead) return measure_overhead(overhead_trials);
    return run_lab_command(lab_options, true);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "convlab: error: {}\n", e.what());
    return kExitUsage;
  } catch (const InputError& e) {
    fmt::print(stderr, "convlab: error: {}\n", e.what());
    return kExitUsage;
  }
}

}  // namespace convlab
