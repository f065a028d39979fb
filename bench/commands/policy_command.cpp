// The `convlab policy` subcommand: which dynamic-batching policy (max batch, max wait) serves a
// declared Poisson arrival rate within a p99 SLO, from latency per batch measured now or read
// from a results file; bench/analysis/batching_sim.hpp simulates each policy.
#include "bench/commands/commands.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <string>

#include <fmt/format.h>

#include "bench/analysis/batching_sim.hpp"
#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/commands/measure_command.hpp"
#include "bench/harness/build_info.hpp"
#include "bench/harness/model_bench.hpp"
#include "bench/report/results_reader.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "bench/report/wording.hpp"

namespace convlab {

namespace {

struct PolicyOptions {
  // The model, backend, batches, protocol, threads, seed and precision measured now (the batches,
  // warmup and trials have the policy's own defaults: see add_policy_options).
  RunOptions run;
  // Empty: <backend>.auto (for int8 its int8 twin) where it runs the model, else the file's only kernel.
  std::string kernel;
  double rate = 0;     // requests per second
  double slo_p99_ms = 0;
  std::string from;    // a results file; empty: measure now
  std::string max_waits = "0,1,2,5,10";  // ms
  std::int64_t requests = 20000;
};

}  // namespace

namespace {

std::vector<double> parse_waits(const std::string& list) {
  std::vector<double> out;
  for (const std::string& item : split(list, ',')) {
    double v = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || !(v >= 0))
      throw InputError(fmt::format("--max-wait-ms: '{}' is not a time of 0 ms or more (e.g. --max-wait-ms 0,1,5)", item));
    out.push_back(v);
  }
  return out;
}

// The rows that describe one served configuration: the model on the backend with one kernel; on a
// GPU the mode a server pays for (with the copies, when measured).
std::vector<const Result*> pick_rows(const std::vector<Result>& results, const PolicyOptions& o, const std::string& source) {
  std::vector<const Result*> rows;
  std::set<std::string> kernels;
  for (const Result& r : results)
    if (r.status == ResultStatus::ok && r.model == o.run.model && r.backend == o.run.backend &&
        (o.kernel.empty() || r.kernel == o.kernel)) {
      rows.push_back(&r);
      kernels.insert(r.kernel);
    }
  if (rows.empty())
    throw InputError(fmt::format("{}: no measured rows for {} on {}{}", source, o.run.model, o.run.backend,
                                 o.kernel.empty() ? "" : " with " + o.kernel));
  if (kernels.size() > 1)
    throw InputError(fmt::format("{}: {} kernels measured {} ({}): choose one with --kernel", source, kernels.size(),
                                 o.run.model, fmt::join(kernels, ", ")));
  const bool transfers = std::any_of(rows.begin(), rows.end(), [](const Result* r) { return r->mode == "eager+transfers"; });
  const std::string mode = transfers ? "eager+transfers" : rows.front()->mode;
  std::erase_if(rows, [&mode](const Result* r) { return r->mode != mode; });
  return rows;
}

std::vector<Result> measure_now(const PolicyOptions& o, std::string& kernel) {
  if (const BackendStatus status = backend_status(parse_backend(o.run.backend)); !status.available)
    throw InputError(fmt::format("--backend {}: not available here ({})", o.run.backend, status.detail));
  if (split(o.run.precisions, ',').size() != 1)
    throw InputError(
        fmt::format("--precision: a policy serves one precision (fp32 or int8), not '{}'", o.run.precisions));
  RunOptions run = o.run;
  run.kernels = o.kernel;
  if (run.kernels.empty()) {  // for int8, model_bench_config makes <backend>.auto its int8 twin
    const std::vector<std::string> supporting = kernels_for_model(o.run.model, parse_backend(o.run.backend));
    run.kernels = o.run.backend + ".auto";
    if (std::ranges::find(supporting, run.kernels) == supporting.end() && !supporting.empty())
      run.kernels = supporting.front();
  }
  const ModelBenchConfig config = model_bench_config(run);
  if (config.kernels.size() != 1)
    throw InputError(
        fmt::format("--kernel: a policy serves one kernel, not {} ({})", config.kernels.size(), run.kernels));
  kernel = config.kernels.front();
  fmt::print("measuring {} on {} with {} at batches {} ({} warmup, {} each)...\n", o.run.model, o.run.backend, kernel,
             o.run.batches, o.run.warmup, count_of(o.run.trials, "trial"));
  std::fflush(stdout);
  return run_model_bench(config);
}

}  // namespace

CLI::App* add_policy_options(CLI::App& app, PolicyOptions& o) {
  o.run.batches = "1,2,4,8,16,32";
  o.run.warmup = 3;
  o.run.trials = 40;
  CLI::App* cmd = app.add_subcommand("policy", "Choose a dynamic-batching policy (max batch, max wait) for a Poisson "
                                               "arrival rate and a p99 SLO, by simulation from measured latencies");
  cmd->add_option("--model", o.run.model, "Network (see `convlab models`)")->capture_default_str();
  cmd->add_option("--rate", o.rate, "Arrivals per second (Poisson)")->required();
  cmd->add_option("--slo-p99-ms", o.slo_p99_ms, "The p99 response time to meet, ms (queueing + batch)")->required();
  cmd->add_option("--from", o.from, "Read latency per batch from a results file instead of measuring now");
  cmd->add_option("--backend", o.run.backend, "cpu, cuda or metal")->capture_default_str();
  cmd->add_option("--kernel", o.kernel, "Kernel id (default: <backend>.auto, or the file's only kernel)");
  cmd->add_option("--batch", o.run.batches, "Batch sizes to measure now")->capture_default_str();
  cmd->add_option("--max-wait-ms", o.max_waits, "Max waits to try, ms")->capture_default_str();
  cmd->add_option("--warmup", o.run.warmup, "Untimed runs per batch, measuring now")->capture_default_str();
  cmd->add_option("--trials", o.run.trials, "Timed runs per batch, measuring now")->capture_default_str();
  add_threads_option(*cmd, o.run.threads);
  add_auto_options(*cmd);
  add_precision_options(*cmd, o.run);
  cmd->add_option("--requests", o.requests, "Simulated requests per policy")->capture_default_str();
  cmd->add_option("--seed", o.run.seed, "Seed of the arrivals and service draws (and the measured input)")
      ->capture_default_str();
  return cmd;
}

// The run that checks a recommendation, with every setting that shaped the service times: the
// kernel, the thread count, the int8 rows' quantisation (a file's rows name theirs) and the mode
// of the rows they came from (a 2-thread check of a 1-thread measurement measures something else).
std::string check_command(const Result& row, const PolicyOptions& o, std::int64_t batch) {
  std::string command = fmt::format("convlab run --model {} --backend {} --kernel {} --batch {}", o.run.model,
                                    row.backend, row.kernel, batch);
  if (row.threads > 0) command += fmt::format(" --threads {}", row.threads);
  if (row.precision == Precision::int8)
    command += " --precision int8" + (row.quantization_options.empty() ? "" : " " + row.quantization_options);
  if (row.mode == "end-to-end")
    command += std::string(" --end-to-end") + (row.images.rfind("generated", 0) == 0 ? "" : " --images DIR");
  return command + " --trials 200";
}

// Exit 0 with a recommendation or the reason none meets the SLO; InputError (exit 2) for bad input.
int run_policy(const PolicyOptions& o) {
  if (!(o.rate > 0)) throw InputError(fmt::format("--rate: {} must be above 0 requests per second", o.rate));
  if (!(o.slo_p99_ms > 0)) throw InputError(fmt::format("--slo-p99-ms: {} must be above 0", o.slo_p99_ms));
  if (o.requests < 1000 || o.requests > 10'000'000)
    throw InputError(fmt::format("--requests: {} must be between 1000 and 10000000", o.requests));
  if (o.run.warmup < 0 || o.run.trials < 1) throw InputError("--warmup must be 0 or more and --trials at least 1");
  const std::vector<double> waits = parse_waits(o.max_waits);
  if (!o.from.empty() && o.run.precisions != "fp32")
    throw InputError(
        "--precision: applies to measuring now; from a file, choose its int8 rows by --kernel (e.g. cpu.auto_int8)");
  std::vector<Result> measured;
  std::string source;
  if (o.from.empty()) {
    std::string kernel;
    measured = measure_now(o, kernel);
    source = fmt::format("measured now with {}", kernel);
  } else {
    const ResultsFile file = read_results_file(o.from);
    measured = file.results;
    source = "'" + o.from + "'";
    // The check command below runs this binary: say when the file came from another build.
    const std::string file_build = file.context.value("git_commit", ""), flags = file.context.value("cxx_flags", "");
    if ((!file_build.empty() && file_build != build::git_commit) || (!flags.empty() && flags != build::kCxxFlags))
      fmt::print("note: {} was measured by build {} ({}), this binary is {} ({}): check the recommendation with that "
                 "build\n",
                 source, file_build.substr(0, 12), flags, std::string(build::git_commit).substr(0, 12), build::kCxxFlags);
  }
  ServiceTimes service;
  const std::vector<const Result*> rows = pick_rows(measured, o, source);
  fmt::print("\nservice time per batch ({}, {}{}): each batch draws a latency from the trials, interpolated between sizes\n",
             rows.front()->kernel, source, rows.front()->mode.empty() ? "" : ", mode " + rows.front()->mode);
  fmt::print("{:>7} {:>7} {:>9} {:>9} {:>9} {:>13}\n", "batch", "trials", "p50 ms", "p99 ms", "mean ms", "capacity/s");
  for (const Result* r : rows) {
    service.add(r->batch, r->measurement.samples_ms);
    fmt::print("{:>7} {:>7} {:>9.3f} {:>9.3f} {:>9.3f} {:>13.0f}\n", r->batch, r->latency.n, r->latency.p50, r->latency.p99,
               r->latency.mean, static_cast<double>(r->batch) * 1e3 / r->latency.mean);
  }
  std::set<std::int64_t> sizes;
  for (std::int64_t b = 1; b <= service.largest(); b *= 2) sizes.insert(b);
  for (const auto& [b, samples] : service.measured()) sizes.insert(b);

  const SimConfig sim{.rate_per_s = o.rate, .requests = o.requests, .seed = o.run.seed};
  fmt::print("\n{} requests per policy, Poisson arrivals at {}/s (seed {}), one worker, FIFO; the first {:.0f}% are "
             "warm-up and not counted. A batch starts when max batch requests wait or the oldest has waited max wait.\n",
             o.requests, o.rate, o.run.seed, sim.warmup_fraction * 100);
  fmt::print("{:>9} {:>11} {:>9} {:>9} {:>9} {:>12} {:>6} {:>10}  {}\n", "max batch", "max wait ms", "p50 ms", "p95 ms",
             "p99 ms", "throughput/s", "util", "mean batch", "p99 <= SLO");
  std::vector<PolicyOutcome> outcomes;
  for (const std::int64_t b : sizes)
    for (const double w : waits) {
      if (b == 1 && w > 0) continue;  // a batch of one never waits for company
      const PolicyOutcome p = simulate(service, {b, w}, sim);
      outcomes.push_back(p);
      fmt::print("{:>9} {:>11} {:>9.3f} {:>9.3f} {:>9.3f} {:>12.1f} {:>5.0f}% {:>10.2f}  {}\n", b, w, p.p50_ms, p.p95_ms,
                 p.p99_ms, p.throughput_per_s, 100 * p.utilisation, p.mean_batch,
                 p.overloaded ? "no (overloaded: rate >= capacity)" : p.p99_ms <= o.slo_p99_ms ? "yes" : "no");
    }
  const double capacity = service.capacity_per_s(service.largest());
  if (const auto best = recommend(outcomes, o.slo_p99_ms)) {
    const PolicyOutcome& p = outcomes[*best];
    fmt::print("\nrecommended: max batch {}, max wait {} ms: p99 {:.3f} ms, {:.3f} ms of headroom under the {} ms SLO; "
               "utilisation {:.0f}%, mean batch {:.2f}\n",
               p.policy.max_batch, p.policy.max_wait_ms, p.p99_ms, o.slo_p99_ms - p.p99_ms, o.slo_p99_ms,
               100 * p.utilisation, p.mean_batch);
    fmt::print("check it against a real run: {} (its latency is the service time above; the simulation adds the "
               "queueing and the wait)\n",
               check_command(*rows.front(), o, p.policy.max_batch));
  } else if (o.rate >= capacity) {
    fmt::print("\nnone can: {}/s exceeds the capacity with batches up to {} ({:.0f}/s: batch / mean latency, at its best "
               "size); measure larger batches, a faster kernel, or add workers\n",
               o.rate, service.largest(), capacity);
  } else {
    const auto fastest = std::min_element(outcomes.begin(), outcomes.end(),
                                          [](const auto& a, const auto& b) { return a.p99_ms < b.p99_ms; });
    fmt::print("\nnone meets the SLO: the lowest p99 is {:.3f} ms (max batch {}, max wait {} ms), over the {} ms SLO\n",
               fastest->p99_ms, fastest->policy.max_batch, fastest->policy.max_wait_ms, o.slo_p99_ms);
  }
  return kExitOk;
}

Command add_policy_command(CLI::App& app) {
  auto o = std::make_shared<PolicyOptions>();
  return {add_policy_options(app, *o), [o] { return run_policy(*o); }};
}

}  // namespace convlab
