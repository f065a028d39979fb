// What the measuring commands share (`convlab`, `run`, `sweep`, `policy`): their options, the
// ModelBenchConfig they make, the header they print and the files and exit code they end with.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/commands/cli_args.hpp"
#include "bench/harness/environment.hpp"
#include "bench/harness/model_bench.hpp"
#include "bench/harness/peak.hpp"
#include "bench/report/results.hpp"

namespace convlab {

struct RunOptions {
  std::string model = "lab-cnn";
  std::string backend = "cpu";
  std::string kernels = "all";  // also "auto": the backend's <backend>.auto
  std::string batches = "1,4,16,32";
  int warmup = 10;
  int trials = 100;
  int threads = 0;  // 0: every core
  std::string percentile = "linear";
  std::uint64_t seed = 1;
  std::string weights;  // safetensors state_dict; empty: seeded weights
  bool per_layer = false;
  std::string json, csv;
  bool explain = false;
  bool cuda_graph = false;
  bool no_fuse = false;
  bool end_to_end = false;
  std::string images;  // with end_to_end: a folder of images; empty: generated ones
  int fresh_processes = 0;
  bool interleave = false;          // a batch's rows timed together, round by round (CPU)
  std::optional<double> settle_ms;  // with interleave: --settle-ms (default: Protocol's)
  std::string precisions = "fp32";  // fp32, int8 or both: which kernels of --kernel run
  int calibration = 32;             // int8: seeded calibration inputs
  std::string observer = "minmax";  // int8: minmax or histogram
  bool reduce_range = false;        // int8: 7-bit activations
  int eval_inputs = 64;             // int8: seeded inputs for the prediction change
  std::string quantized;            // int8: an interchange file instead of the calibration
};

// --precision and the int8 quantisation options (--calibration, --observer, --reduce-range,
// --quantized, --eval-inputs), as `run`, `sweep` and `policy` take them.
void add_precision_options(CLI::App& cmd, RunOptions& o);

// Checks the options and makes the run's configuration. Throws InputError for bad values, and
// BackendUnavailable (exit 4) when the backend cannot run here or no kernel of it supports the
// model: a script must be able to tell that nothing was measured.
ModelBenchConfig model_bench_config(const RunOptions& options);

class Progress;
// The on_result callback of a measuring command: prints each row (with `explain`, also what
// cpu.auto chose) above the progress line, which then names the next kernel x batch as
// "<what> <kernel> batch B (i/n)". Steps count from `first_step` of `total_steps` (0: this run's).
std::function<void(const Result&)> print_and_advance(const ModelBenchConfig& config, Progress& progress, std::string what,
                                                     bool explain, std::size_t first_step = 0,
                                                     std::size_t total_steps = 0);

// Output paths are checked before a run, not after minutes of measuring.
void check_writable(const std::string& json, const std::string& csv);
// The header of every measuring command: the environment, and the FMA peak measured now.
Peak print_context(const Environment& env);
// What a peak measured again after the rows (`again`) says about the % of peak taken against
// the one measured at the start, when they differ by over 10%: well above, the machine was busier
// at the start and the percentages are too high; well below, it grew busier during the rows (or
// the start read high) and they may be too low. Empty when they agree. unit: "GFLOP/s";
// rows: "FP32 rows".
std::string peak_drift_warning(double again, double start, const std::string& unit, const std::string& rows);
// The end of every measuring command: measures the FMA peak again (into peak.gflops_all_after,
// for the results file) and prints peak_drift_warning; prints the flag legend; writes the
// requested files. The exit code says whether every result is ok, some
// ran out of memory, or a SIGINT cut the run short (then the files hold what was finished,
// marked incomplete).
int finish_measuring(const std::string& json, const std::string& csv, const Environment& env, Peak& peak,
                     const std::vector<Result>& results);

}  // namespace convlab
