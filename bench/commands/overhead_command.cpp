// `convlab overhead`: the harness's own cost per trial, timed on an empty workload.
#include <memory>

#include <fmt/format.h>

#include "bench/commands/cli.hpp"
#include "bench/commands/commands.hpp"
#include "bench/harness/harness.hpp"
#include "bench/harness/stats.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

namespace {

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

}  // namespace

Command add_overhead_command(CLI::App& app) {
  auto trials = std::make_shared<int>(100000);
  CLI::App* cmd = app.add_subcommand("overhead", "Measure the harness's own cost per trial");
  cmd->add_option("--trials", *trials, "Empty trials to time")->capture_default_str();
  return {cmd, [trials] { return measure_overhead(*trials); }};
}

}  // namespace convlab
