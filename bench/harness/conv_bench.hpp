// `convlab conv`: single convolutions, each kernel timed with the same harness as networks, its
// output checked against the oracle first, and compared with the oneDNN baseline in one run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/harness/problem_list.hpp"
#include "bench/report/results.hpp"

namespace convlab {

struct ConvBenchConfig {
  std::vector<NamedProblem> problems;
  std::vector<std::int64_t> batches;  // empty: each descriptor's own mb
  Backend backend = Backend::cpu;     // whose kernels run when `kernels` is empty
  std::vector<std::string> kernels;   // empty: every available kernel of `backend` that supports the problem
  Protocol protocol;
  bool interleave = false;  // time the kernels of a problem together, trial by trial (measure_interleaved)
  PercentileMethod method = PercentileMethod::linear;
  std::uint64_t seed = 1;
  double peak_gflops = 0;
};

// Problems with more FLOPs than this are checked against the oracle on a sample of outputs.
inline constexpr double kFullCheckMaxFlops = 2e9;
inline constexpr std::int64_t kSampledOutputs = 4096;

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
