// `convlab conv`: single convolutions in benchdnn's descriptor syntax, every kernel of a backend
// checked against the oracle and timed beside oneDNN (bench/harness/conv_bench.hpp measures).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/cli_args.hpp"
#include "bench/commands/commands.hpp"
#include "bench/commands/measure_command.hpp"
#include "bench/harness/conv_bench.hpp"
#include "bench/harness/interrupt.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"
#include "bench/report/wording.hpp"

namespace convlab {

namespace {

struct ConvOptions {
  std::string problem, problems_file;
  std::string backend = "cpu";
  std::string batches;  // empty: each descriptor's mb
  std::string kernels = "all";
  std::string precision = "fp32";
  int warmup = 10;
  int trials = 50;
  int threads = 0;
  std::string percentile = "linear";
  std::uint64_t seed = 1;
  bool interleave = false;
  std::optional<double> settle_ms;
  std::string json, csv;
};

int run_conv(const ConvOptions& o) {
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
  config.precision = parse_precision(o.precision);
  if (o.kernels != "all") config.kernels = parse_kernel_ids(o.kernels, config.backend, config.precision);
  // A named kernel that runs none of the problems would only be missing from the table.
  for (const std::string& id : config.kernels) {
    const Int8KernelInfo* int8 = config.precision == Precision::int8 ? find_int8_kernel(id) : nullptr;
    const KernelInfo* fp32 = int8 == nullptr ? find_kernel(id) : nullptr;
    std::string why;
    bool runs = false;
    for (const NamedProblem& np : config.problems)
      for (const std::int64_t batch : config.batches.empty() ? std::vector{np.problem.n} : config.batches) {
        const ConvProblem p = np.problem.with_batch(batch);
        const std::string reason = int8 != nullptr ? int8->unsupported(p) : fp32->unsupported(p);
        runs = runs || reason.empty();
        if (why.empty() && !reason.empty()) why = fmt::format("{}: {}", to_string(p), reason);
      }
    if (!runs) throw InputError(fmt::format("--kernel: {} runs none of the problems ({})", id, why));
  }
  require_backend(config.backend);
  config.protocol = {.warmup = o.warmup, .trials = o.trials, .settle_ms = settle_ms_for(o.settle_ms, o.interleave)};
  config.interleave = o.interleave;
  config.method = parse_percentile_method(o.percentile);
  config.seed = o.seed;
  check_writable(o.json, o.csv);
  const Environment env = collect_environment();
  Peak peak = print_context(env);
  config.peak_gflops = peak.gflops_all;
  const bool int8 = config.precision == Precision::int8;
  if (int8) config.peak_gflops = peak.int8_gops_all;  // GOP/s: a share of the int8 peak (0: no probe here)
  fmt::print("protocol: warmup {}, {}{}, outputs checked against {} before timing\n", o.warmup, count_of(o.trials, "trial"),
             o.interleave ? fmt::format(", a problem's kernels interleaved trial by trial (each trial after {} ms or more of "
                                        "its own untimed runs)", config.protocol.settle_ms)
                          : "",
             int8 ? "cpu.20_int8_reference (in quanta of the output scale)" : "cpu.00_reference");
  if (int8) {
    fmt::print("int8: seeded quint8 input over 7 bits (oneDNN's int8 saturates above, without VNNI) and qint8 weights "
               "with per-channel scales (kernels/common/quantize.hpp)\n");
    if (config.backend == Backend::cpu && cpu_int8_seven_bit_path())
      fmt::print("      without VNNI our u8 x s8 kernels take their seven-bit path on such inputs (exactly; "
                 "kernels/cpu/int8_simd.hpp): full-range activations run slower forms\n");
  }
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
  if (const std::string summary = best_versus_onednn_summary(results) + auto_versus_best_summary(results);
      !summary.empty())
    fmt::print("\n{}", summary);
  return finish_measuring(o.json, o.csv, env, peak, results);
}

}  // namespace

Command add_conv_command(CLI::App& app) {
  auto o = std::make_shared<ConvOptions>();
  CLI::App* conv = app.add_subcommand("conv", "Time single convolutions: every kernel, checked, against oneDNN");
  conv->add_option("--problem", o->problem, "A benchdnn descriptor, e.g. mb32ic64ih56oc64oh56kh3ph1");
  conv->add_option("--problems", o->problems_file, "A file of descriptors, one per line, role after it");
  conv->add_option("--batch", o->batches, "Batch sizes overriding the descriptors' mb, comma-separated");
  conv->add_option("--backend", o->backend, "cpu or cuda: whose kernels run")->capture_default_str();
  conv->add_option("--kernel", o->kernels, "Kernel id(s) of that backend, comma-separated, or all")
      ->capture_default_str();
  conv->add_option("--precision", o->precision, "fp32 or int8: which kernels run, on which data")->capture_default_str();
  conv->add_option("--warmup", o->warmup, "Untimed runs before the trials")->capture_default_str();
  conv->add_option("--trials", o->trials, "Timed runs per kernel")->capture_default_str();
  add_threads_option(*conv, o->threads);
  add_auto_options(*conv);
  conv->add_option("--percentile", o->percentile, "linear or nearest-rank")->capture_default_str();
  conv->add_option("--seed", o->seed, "Seed of the input and weights")->capture_default_str();
  conv->add_flag("--interleave", o->interleave,
                 "Time a problem's kernels together, one trial of each per round, so a busy spell falls on all of them");
  add_settle_option(*conv, o->settle_ms);
  conv->add_option("--json", o->json, "Write results as JSON (schema convlab/1)");
  conv->add_option("--csv", o->csv, "Write results as CSV");
  return {conv, [o] { return run_conv(*o); }};
}

}  // namespace convlab
