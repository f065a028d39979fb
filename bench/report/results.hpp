// Results and their reports: a human table, JSON (schema "convlab/1", documented in the
// README) and CSV. One Result per model x backend x kernel x batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/harness/environment.hpp"
#include "bench/harness/harness.hpp"
#include "bench/harness/memory.hpp"
#include "bench/harness/per_layer.hpp"
#include "bench/check/quantization_effect.hpp"
#include "bench/harness/stats.hpp"
#include "models/network.hpp"

namespace convlab {

inline constexpr const char* kSchema = "convlab/1";

// invalid: the kernel's outputs differ from the oracle's (or are not finite); its timings are
// never reported.
enum class ResultStatus { ok, out_of_memory, invalid };
std::string_view to_string(ResultStatus status);

// How far a kernel's output is from the oracle's on the same input. Int8 rows compare quantised
// values: max_abs counts quanta of the output scale, peak is the largest |q - zero point| and
// normalised is ||q - q_ref|| / ||q_ref - zero point||.
struct ErrorStats {
  double max_abs = 0;
  double max_rel = 0;     // max |out - ref| / max(|ref|, 1e-6): large only where ref is near zero
  double normalised = 0;  // ||out - ref||_2 / ||ref||_2
  double peak = 0;        // max |ref| over the outputs compared: the scale max_abs is judged against
  std::int64_t checked = 0;  // outputs compared
  bool sampled = false;      // true when only a sample of the outputs was compared
};

// End-to-end rows (bench/pipeline/end_to_end.hpp): the median per batch of each stage over the trials. The
// row's latency is the whole pass, timed by the harness; the stages are timed inside it.
struct StageTimes {
  double decode_ms = 0, preprocess_ms = 0, forward_ms = 0;
  double sum_ms() const { return decode_ms + preprocess_ms + forward_ms; }
};

// --fresh-process N (bench/pipeline/fresh_process.hpp): per new process, the time from its start to its
// first forward's result, and that first forward alone.
struct FreshProcesses {
  std::vector<double> total_ms, forward_ms;
};

struct Result {
  std::string model;    // the network, or empty for a single convolution
  std::string problem;  // the benchdnn descriptor, for a single convolution
  std::string role;     // e.g. "first layer", for a single convolution
  std::string backend, kernel;
  Precision precision = Precision::fp32;  // int8 rows: accuracy counts quanta of the output scale
  // GPU: "eager", "eager+transfers" or "graph" (bench/harness/gpu_model_bench.hpp); "end-to-end" for a pass that
  // decodes and preprocesses its batch first (bench/pipeline/end_to_end.hpp); empty: the forward alone on the CPU
  std::string mode;
  std::int64_t batch = 0;
  int threads = 0;
  bool interleaved = false;  // timed trial by trial together with the other kernels of its problem
  ResultStatus status = ResultStatus::ok;
  std::string error;  // why the status is not ok
  std::string mistrusted;  // why an ok result proves little (bench/analysis/mistrust.hpp); flag `mistrusted`
  Protocol protocol;
  PercentileMethod method = PercentileMethod::linear;
  Measurement measurement;
  Summary latency;                        // over measurement.samples_ms
  std::optional<Summary> device_latency;  // over measurement.device_samples_ms
  MemoryAccount model_memory;             // the bytes the plan accounts for
  std::optional<RowMemory> row_memory;    // resident memory of this row alone (bench/harness/memory.hpp)
  bool effective_flops = false;  // a kernel did fewer multiplies than counted (Winograd): flag effective_flops
  bool on_one_thread = false;    // cpu.auto ran the forward on 1 of several threads (forward_threads.hpp): flag on_1_thread
  double flops_per_item = 0;
  double peak_gflops = 0;             // the measured all-threads peak of the row's precision (FP32 FMA, int8); 0: not measured
  std::optional<ErrorStats> accuracy;  // against cpu.00_reference (int8: cpu.20_int8_reference), where checked
  std::vector<std::string> choices;    // "conv1: chose ..." for kernels that choose (cpu.auto)
  std::optional<double> layout_ms;     // p50 of the layout conversions alone, when the kernel makes any
  std::vector<LayerTime> layer_times;  // with --per-layer: each layer's median and share
  std::optional<StageTimes> stages;    // end-to-end rows (mode "end-to-end")
  std::string images;                  // end-to-end rows: where the images came from
  std::optional<FreshProcesses> fresh;  // with --fresh-process N
  std::optional<QuantizationEffect> quantization;  // int8 network rows: the prediction change against FP32
  // int8 network rows: the run options that quantise the network as this row's run did
  // (quantization_arguments, e.g. "--quantized q.safetensors"; empty: convlab's default calibration)
  std::string quantization_options;

  double gflops() const { return flops_per_item * static_cast<double>(batch) / (latency.p50 * 1e6); }
  double percent_of_peak() const { return peak_gflops > 0 ? 100.0 * gflops() / peak_gflops : 0.0; }

  double per_item_ms() const { return latency.p50 / static_cast<double>(batch); }
  double throughput_items_per_s() const { return static_cast<double>(batch) * 1e3 / latency.p50; }
  std::vector<std::string> flags() const;  // the summary's flags plus the harness's
  // The resident memory the row's "peak MiB" shows: its own peak where measured, else the
  // process's high-water mark over its runs (flagged memory_not_own).
  std::uint64_t shown_peak_bytes() const { return row_memory ? row_memory->peak_bytes : measurement.peak_rss_bytes; }
};

// Human table: one row per result, with the columns the batch 1 vs batch 32 lesson needs.
std::string table_header();
std::string table_row(const Result& r);

nlohmann::json to_json(const Result& r);
// The protocol for timing layout conversions apart: short, they are only a share of the run.
inline constexpr Protocol kLayoutProtocol{.warmup = 2, .trials = 15};

struct Peak;
// `peak` may be null (not measured).
nlohmann::json results_document(const Environment& env, const Peak* peak, const std::vector<Result>& results);
std::string csv_header();
std::string csv_row(const Result& r);

// Checks, before a run, that `path` can be written: a probe file beside it is created and removed;
// the path itself is left untouched, so a run killed later never costs the results already
// there. Throws InputError naming the path.
void check_writable(const std::string& path);
// Writes atomically (temporary file + rename): a reader never sees half a file, and the path is
// only ever replaced by a complete one. Throws InputError naming the path when it cannot be
// written.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace convlab
