// `convlab conv`: single convolutions, each kernel timed with the same harness as networks, its
// output checked against the oracle first, and compared with the oneDNN baseline in one run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench/harness/problem_list.hpp"
#include "bench/report/results.hpp"

namespace convlab {

struct ConvBenchConfig {
  std::vector<NamedProblem> problems;
  std::vector<std::int64_t> batches;  // empty: each descriptor's own mb
  Backend backend = Backend::cpu;     // whose kernels run when `kernels` is empty
  Precision precision = Precision::fp32;  // int8: the int8 kernels on quantised data (int8_conv_data.hpp)
  std::vector<std::string> kernels;   // empty: every available kernel of `backend` and `precision` that supports the problem
  Protocol protocol;
  bool interleave = false;  // time the kernels of a problem together, trial by trial (measure_interleaved)
  PercentileMethod method = PercentileMethod::linear;
  std::uint64_t seed = 1;
  double peak_gflops = 0;
};

// Problems with more FLOPs than this are checked against the oracle on a sample of outputs.
inline constexpr double kFullCheckMaxFlops = 2e9;
inline constexpr std::int64_t kSampledOutputs = 4096;

// Calls f(i, n, k, y, x) for each output a check compares against the oracle (i: its NCHW index):
// every output of small problems, an evenly spread sample of kSampledOutputs of large ones (the
// oracle would take minutes there), and sums the error (`diff` against `ref`) as ErrorStats.
template <typename F>  // F: (i, n, k, y, x) -> std::pair<double diff, double ref>, |diff| NaN-aware
ErrorStats compare_outputs(const ConvProblem& p, F&& f) {
  const std::int64_t total = p.output_elems(), oh = p.out_h(), ow = p.out_w();
  ErrorStats e;
  e.sampled = p.flops() > kFullCheckMaxFlops && total > kSampledOutputs;
  const std::int64_t count = e.sampled ? kSampledOutputs : total;
  double diff2 = 0, ref2 = 0;
  for (std::int64_t s = 0; s < count; ++s) {
    const std::int64_t i = e.sampled ? s * (total / count) + (s * 7919) % (total / count) : s;
    const auto [d, ref] = f(i, i / (ow * oh * p.k), i / (ow * oh) % p.k, i / ow % oh, i % ow);
    if (!(d <= e.max_abs)) e.max_abs = d;  // NaN included: std::max would drop it
    e.max_rel = std::max(e.max_rel, d / std::max(std::abs(ref), 1e-6));
    diff2 += d * d;
    ref2 += ref * ref;
    e.peak = std::max(e.peak, std::abs(ref));
  }
  e.normalised = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  e.checked = count;
  return e;
}

// The judgement of one kernel's error against the oracle, as `run` and `validate` judge a layer
// (bench/check/tolerance.hpp, scaled by the kernel's error_scale): empty when within tolerance,
// else "INVALID: ..." with the numbers. NaN or Inf never pass.
std::string judge_accuracy(const ErrorStats& e, double error_scale);

// Each kernel is planned, run once and judged (judge_accuracy) before it is timed: one beyond
// tolerance becomes an INVALID row without timings, and the command then exits 1.
std::vector<Result> run_conv_bench(const ConvBenchConfig& config, const std::function<void(const Result&)>& on_result);

// The table for single convolutions: one block per problem, with % of peak, the speed ratio to
// onednn.conv (its p50 / ours: above 1 is faster) and the error against the oracle.
// Per batch size: the geometric mean over problems of (onednn.conv p50 / best of ours p50),
// ours being every kernel that is neither a baseline nor the oracle. Empty without oneDNN.
std::string best_versus_onednn_summary(const std::vector<Result>& results);
// cpu.auto's promise: it chooses a kernel whose time is within 5% of the best other kernel of
// ours on the same problem, both timed in the same run (interleaved, to be fair), the chosen one
// in its own row (cpu.auto's row when there is none). Per batch: on how many problems it held,
// and the worst miss. Empty when cpu.auto or no other kernel of ours ran.
inline constexpr double kAutoWithin = 0.05;
std::string auto_versus_best_summary(const std::vector<Result>& results);

std::string conv_table_block(const NamedProblem& problem, std::int64_t batch, const std::vector<Result>& results);

}  // namespace convlab
