// A lab run: one model on one backend, each chosen kernel at each batch size, measured with the
// harness. This is what `convlab run` and the default lab call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/image.hpp"
#include "bench/report.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab {

struct LabConfig {
  bool cuda_graph = false;  // CUDA: also capture the forward in a graph and time its replay
  // GPU: a conv writes the output of the residual add or pool after it (models/gpu_network.hpp);
  // false (--no-fuse) runs every layer apart, to measure what the fusion saves.
  bool fuse = true;
  std::string model = "lab-cnn";
  Backend backend = Backend::cpu;
  std::vector<std::string> kernels;  // each runs every conv layer of the model
  std::vector<std::int64_t> batches = {1, 4, 16, 32};
  Protocol protocol;
  PercentileMethod method = PercentileMethod::linear;
  std::uint64_t seed = 1;  // weights (unless `weights` names a file) and input
  std::string weights;     // a safetensors state_dict; empty: seeded weights
  bool per_layer = false;  // also time each layer (a separate pass after the measured trials)
  double peak_gflops = 0;  // the measured all-threads FMA peak, for % of peak; 0: not measured
  // End-to-end (CPU): each timed pass decodes and preprocesses its batch from these images before
  // the forward (bench/end_to_end.hpp), and the row is mode "end-to-end"; null: the forward alone.
  std::shared_ptr<const ImageSet> images;
  // --fresh-process N: also time the first forward of N new convlab processes per kernel x batch
  // (bench/fresh_process.hpp; re-executes this binary, so only the convlab tool sets it).
  int fresh_processes = 0;
};

// The kernels of `backend` that support every conv layer of `model`, in list order.
std::vector<std::string> kernels_for_model(const std::string& model, Backend backend);

// The model-only input: the same seeded image in every batch item, whatever the batch.
void fill_lab_input(const Network& net, std::span<float> input, std::uint64_t seed);

// The harness's device for a backend; nullptr when it is not available here.
std::unique_ptr<Device> make_device(Backend backend);

// Runs `plan` once more on its input and the oracle on the same input; empty when every layer
// output matches within the tolerance of a kernel with `error_scale` (bench/tolerance.hpp),
// otherwise the first layer that differs and by how much, or that its values are not finite.
// (It runs the forward itself: what ran last, e.g. layout-change timing, may have left the
// activation buffers holding anything.)
std::string differs_from_reference(const Network& net, NetworkPlan& plan, double error_scale);
// The same judgement for any executor: `got(i)` is layer i's output on the host, or nothing for a
// layer it does not store (a conv fused into the layer after it); `input` what it ran on.
std::string differs_from_reference(const Network& net, std::int64_t batch, std::span<const float> input,
                                   const std::function<std::optional<std::span<const float>>(std::size_t)>& got,
                                   double error_scale);

// Measures every kernel x batch; each kernel's outputs from its timed runs are then compared
// with the oracle's on the same input, and a kernel that differs is reported INVALID, without
// its timings. A batch that does not fit in memory becomes an out_of_memory
// result and the run goes on. on_result sees each result as soon as it is measured.
// A SIGINT (bench/interrupt.hpp) ends the run early with the results finished so far.
// Throws InputError for an unknown model, an unknown or unsupporting kernel.
std::vector<Result> run_lab(const LabConfig& config, const std::function<void(const Result&)>& on_result = {});

}  // namespace convlab
