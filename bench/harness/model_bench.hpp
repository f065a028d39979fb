// The model benchmark, twin of the conv benchmark (conv_bench.hpp): one model on one backend, each
// chosen kernel at each batch size, measured with the harness, its outputs then judged against
// the oracle (bench/check/oracle.hpp). `convlab run`, `sweep`, `policy` and the default lab call it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/harness/clock.hpp"
#include "bench/harness/device.hpp"
#include "bench/pipeline/image.hpp"
#include "bench/report/results.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab {

struct ModelBenchConfig {
  bool cuda_graph = false;  // CUDA: also capture the forward in a graph and time its replay
  // GPU: a conv writes the output of the residual add or pool after it (models/gpu_network.hpp);
  // false (--no-fuse) runs every layer apart, to measure what the fusion saves.
  bool fuse = true;
  std::string model = "lab-cnn";
  Backend backend = Backend::cpu;
  // Each runs every conv layer of the model. Int8 kernels (kernels/common/int8_kernel.hpp) run it
  // quantised (bench/harness/int8_model_bench.hpp), FP32 ones as it is.
  std::vector<std::string> kernels;
  int calibration_inputs = 32;  // int8: seeded inputs the activations' ranges are observed on
  Observer observer = Observer::minmax;  // int8: how those ranges become quantisation (models/observer.hpp)
  bool reduce_range = false;             // int8: activations over [0, 127] (PyTorch's reduce_range)
  std::string calibration_images;        // int8: a folder of images to calibrate on instead (every one)
  int eval_inputs = 64;         // int8: seeded inputs the prediction change is measured on
  std::string quantized;        // int8: the interchange file (models/quantized_file.hpp); empty: calibrate
  std::vector<std::int64_t> batches = {1, 4, 16, 32};
  Protocol protocol;
  PercentileMethod method = PercentileMethod::linear;
  std::uint64_t seed = 1;  // weights (unless `weights` names a file) and input
  std::string weights;     // a safetensors state_dict; empty: seeded weights
  bool per_layer = false;  // also time each layer (a separate pass after the measured trials)
  double peak_gflops = 0;  // the measured all-threads FMA peak, for % of peak; 0: not measured
  double peak_int8_gops = 0;  // the same for int8 rows (bench/harness/int8_peak.cpp)
  // End-to-end (CPU): each timed pass decodes and preprocesses its batch from these images before
  // the forward (bench/pipeline/end_to_end.hpp), and the row is mode "end-to-end"; null: the forward alone.
  std::shared_ptr<const ImageSet> images;
  // --fresh-process N: also time the first forward of N new convlab processes per kernel x batch
  // (bench/pipeline/fresh_process.hpp; re-executes this binary, so only the convlab tool sets it).
  int fresh_processes = 0;
  // --interleave: the rows of a batch, every kernel and precision, timed together, one forward
  // of each per round (measure_interleaved), the oracle alone after them. CPU forward passes only
  // (model_bench_config refuses it with a GPU backend, images or fresh processes).
  bool interleave = false;
};

// A row's identity before anything is measured: model, backend, kernel, precision (int8 for an
// int8 kernel, its rate then of the int8 peak), batch, threads, protocol.
Result model_row(const ModelBenchConfig& config, const Network& net, const std::string& kernel, std::int64_t batch);

// A row planned and ready to time: its forward, the input that forward reads (an end-to-end pass
// fills it), and what follows the trials (the summaries, the per-layer profile, the check
// against the oracle). Holds the plan.
struct PlannedModelRow {
  Result result;
  std::span<float> input;
  std::function<void()> forward;
  std::function<void(Result&)> finish;
};

// The kernels of `backend` that support every conv layer of `model`, in list order.
std::vector<std::string> kernels_for_model(const std::string& model, Backend backend);

// The model-only input: the same seeded image in every batch item, whatever the batch.
void fill_model_input(const Network& net, std::span<float> input, std::uint64_t seed);

// Times `forward` as `run` does, into r.measurement: alone, or with config.images as the end-to-end
// pass that first decodes and preprocesses a batch into `input` (then r.stages, mode and images).
void measure_forward(const ModelBenchConfig& config, const Network& net, std::span<float> input,
                     const std::function<void()>& forward, Device& device, Clock& clock, Result& r);

// The harness's device for a backend; nullptr when it is not available here.
std::unique_ptr<Device> make_device(Backend backend);

// Measures every kernel x batch; each kernel's outputs from its timed runs are then compared
// with the oracle's on the same input, and a kernel that differs is reported INVALID, without
// its timings. A batch that does not fit in memory becomes an out_of_memory
// result and the run goes on. on_result sees each result as soon as it is measured.
// A SIGINT (bench/harness/interrupt.hpp) ends the run early with the results finished so far.
// Throws InputError for an unknown model, an unknown or unsupporting kernel.
std::vector<Result> run_model_bench(const ModelBenchConfig& config, const std::function<void(const Result&)>& on_result = {});

}  // namespace convlab
