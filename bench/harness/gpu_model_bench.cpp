#include "bench/harness/gpu_model_bench.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include <fmt/format.h>

#include "bench/harness/interrupt.hpp"
#include "bench/analysis/mistrust.hpp"
#include "bench/check/oracle.hpp"
#include "bench/harness/int8_model_bench.hpp"
#include "kernels/common/error.hpp"
#include "models/gpu_int8_network.hpp"
#include "models/gpu_network.hpp"
#ifdef CONVLAB_WITH_CUDA
#include "kernels/cuda/cuda_runtime.hpp"
#endif

namespace convlab {

namespace {

class GpuDevice final : public Device {
 public:
  explicit GpuDevice(gpu::GpuRuntime& rt) : rt_(rt) {}
  std::string name() const override { return std::string(rt_.name()); }
  void synchronize() override { rt_.synchronize(); }
  bool has_device_timer() const override { return rt_.has_device_timer(); }
  void mark_start() override { rt_.record_start(); }
  void mark_stop() override { rt_.record_stop(); }
  double elapsed_ms() override { return rt_.elapsed_ms(); }
  DeviceMemory memory() const override {
    DeviceMemory m{.peak_bytes = rt_.peak_bytes()};
    if (const std::optional<std::size_t> in_use = rt_.device_bytes_in_use()) m.in_use_bytes = *in_use;
    return m;
  }

 private:
  gpu::GpuRuntime& rt_;
};

// Replays the captured forward; only the real runtime has graphs.
std::function<void()> graph_replay(gpu::GpuRuntime& rt, const std::function<void()>& forward) {
#ifdef CONVLAB_WITH_CUDA
  if (auto* cuda = dynamic_cast<cuda::CudaRuntime*>(&rt)) {
    cuda->capture(forward);
    return [cuda] { cuda->replay(); };
  }
#endif
  (void)forward;
  throw InputError(fmt::format("--cuda-graph needs a CUDA device ({} has no graphs)", rt.name()));
}

// The rows of a planned network (GpuNetworkPlan or GpuInt8NetworkPlan), each from row `r`:
// eager (with the per-layer profile when asked), eager+transfers, and graph with --cuda-graph.
// Each trial's host time is around the stream's synchronize; device time where the runtime has a timer.
template <class Plan>
std::vector<Result> timed_rows(Plan& plan, const Result& r, const Network& net, const ModelBenchConfig& config,
                               gpu::GpuRuntime& rt, Device& device, Clock& clock) {
  const auto measured = [&](std::string mode, const std::function<void()>& run) {
    Result m = r;
    m.mode = std::move(mode);
    m.measurement = measure(run, device, config.protocol, clock);
    m.latency = summarize(m.measurement.samples_ms, config.method);
    if (!m.measurement.device_samples_ms.empty()) m.device_latency = summarize(m.measurement.device_samples_ms, config.method);
    return m;
  };
  std::vector<Result> rows;
  rows.push_back(measured("eager", [&plan] { plan.forward(); }));
  if (config.per_layer) rows.back().layer_times = profile_layers(plan, net, config.protocol);
  rows.push_back(measured("eager+transfers", [&plan] {
    plan.upload_input();
    plan.forward();
    plan.download_output();
  }));
  if (config.cuda_graph) rows.push_back(measured("graph", graph_replay(rt, [&plan] { plan.forward(); })));
  return rows;
}

std::vector<Result> out_of_device_memory(Result r) {
  r.status = ResultStatus::out_of_memory;
  r.error = fmt::format("out of device memory at batch {}", r.batch);
  return {r};
}

// One kernel at one batch: its rows (eager, eager+transfers, graph), then the output check that
// every row shares. A batch that does not fit in device memory is one out_of_memory row.
std::vector<Result> measure_gpu(const ModelBenchConfig& config, const Network& net, gpu::GpuRuntime& rt, Device& device,
                                Clock& clock, const std::string& id, std::int64_t batch) {
  const Result base{.model = config.model, .backend = std::string(to_string(config.backend)), .kernel = id, .batch = batch, .threads = 1,
                    .protocol = config.protocol, .method = config.method, .flops_per_item = net.flops_per_item()};
  std::vector<Result> rows;
  rt.reset_peak();  // the device peak reported is this plan's
  try {
    GpuNetworkPlan plan(net, batch, KernelSelection{.default_kernel = id}, rt, config.fuse);
    fill_model_input(net, plan.input().span(), config.seed);  // the same image per item, as on the CPU
    plan.upload_input();
    rt.synchronize();
    Result r = base;
    r.model_memory = plan.memory();
    for (std::size_t i = 0; i < net.layers().size(); ++i)
      if (std::string why = plan.explain(static_cast<int>(i)); !why.empty()) r.choices.push_back(net.layers()[i].name + ": " + why);
    rows = timed_rows(plan, r, net, config, rt, device, clock);

    // Last: the check runs the forward once more on the same input and compares every stored
    // layer with the oracle's, then looks for constant outputs (bench/analysis/mistrust.hpp).
    plan.upload_input();
    plan.forward();
    rt.synchronize();
    std::vector<std::optional<Tensor>> outputs(net.layers().size());
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if (plan.materialised(static_cast<int>(i))) outputs[i] = plan.download_activation(static_cast<int>(i));
    const auto stored = [&outputs](std::size_t i) -> std::optional<std::span<const float>> {
      if (!outputs[i]) return std::nullopt;
      return outputs[i]->span();
    };
    const std::string why = differs_from_reference(net, batch, plan.input().span(), stored, find_kernel(id)->error_scale);
    const std::string mistrust = mistrusted_reason(net, plan.input().span(), stored);
    for (Result& row : rows) {
      if (!why.empty()) row.status = ResultStatus::invalid, row.error = why;
      row.mistrusted = mistrust;
    }
  } catch (const std::bad_alloc&) {
    rows = out_of_device_memory(base);
  }
  return rows;
}

// The same rows for an int8 kernel (a CUDA one, cuda.22_int8_direct where it cannot run a layer):
// the quantised network on the device, its bytes checked against the CPU int8 oracle's at every
// layer (they are the same arithmetic), the last softmax's FP32 output to 1e-5.
std::vector<Result> measure_gpu_int8(const ModelBenchConfig& config, const QuantizedNetwork& q, gpu::GpuRuntime& rt,
                                     Device& device, Clock& clock, const std::string& id, std::int64_t batch) {
  const Network& net = q.network();
  const Result base{.model = config.model, .backend = std::string(to_string(config.backend)), .kernel = id,
                    .precision = Precision::int8, .batch = batch, .threads = 1, .protocol = config.protocol,
                    .method = config.method, .flops_per_item = net.flops_per_item(),
                    .quantization_options = quantization_options(config)};
  std::vector<Result> rows;
  rt.reset_peak();
  try {
    GpuInt8NetworkPlan plan(q, batch, id, rt);
    fill_model_input(net, plan.input().span(), config.seed);
    plan.upload_input();
    rt.synchronize();
    Result r = base;
    r.model_memory = plan.memory();
    for (std::size_t i = 0; i < net.layers().size(); ++i)
      if (!plan.kernel_ids()[i].empty() && plan.kernel_ids()[i] != id)
        r.choices.push_back(fmt::format("{}: {} (the layer {} does not support)", net.layers()[i].name, plan.kernel_ids()[i], id));
    rows = timed_rows(plan, r, net, config, rt, device, clock);

    plan.upload_input();
    plan.forward();
    plan.download_output();
    Int8NetworkPlan oracle(q, batch, "cpu.20_int8_reference");
    std::ranges::copy(plan.input().span(), oracle.input().data());
    oracle.forward();
    std::string why;
    for (std::size_t i = 0; i < net.layers().size() && why.empty(); ++i)
      if (net.layers()[i].kind != LayerKind::softmax &&
          plan.dequantized(static_cast<int>(i)) != oracle.dequantized(static_cast<int>(i)))  // (synchronises)
        why = fmt::format("INVALID: layer {} differs from cpu.20_int8_reference's", net.layers()[i].name);
    const std::span<const float> got = plan.output().span(), want = oracle.output().span();
    for (std::size_t i = 0; i < got.size() && why.empty(); ++i)
      if (!(std::abs(got[i] - want[i]) <= 1e-5f * std::max(1.0f, std::abs(want[i]))))
        why = fmt::format("INVALID: output {} is {}, cpu.20_int8_reference's {}", i, got[i], want[i]);
    for (Result& row : rows)
      if (!why.empty()) row.status = ResultStatus::invalid, row.error = why;
  } catch (const std::bad_alloc&) {
    rows = out_of_device_memory(base);
  }
  return rows;
}
}  // namespace

std::unique_ptr<Device> make_gpu_device(gpu::GpuRuntime& rt) { return std::make_unique<GpuDevice>(rt); }

std::vector<Result> run_gpu_model_bench(const ModelBenchConfig& config, const Network& net, gpu::GpuRuntime& rt,
                                        const std::function<void(const Result&)>& on_result, const Int8Model* int8) {
  const std::unique_ptr<Device> device = make_gpu_device(rt);
  SteadyClock clock;
  std::vector<Result> results;
  try {
    for (const std::string& id : config.kernels)
      for (const std::int64_t batch : config.batches) {
        const bool is_int8 = find_int8_kernel(id) != nullptr;
        if (is_int8 && int8 == nullptr) throw InputError(fmt::format("{}: an int8 kernel needs the quantised model", id));
        for (Result& row : is_int8 ? measure_gpu_int8(config, int8->network, rt, *device, clock, id, batch)
                                   : measure_gpu(config, net, rt, *device, clock, id, batch)) {
          if (is_int8) row.quantization = int8->effect;
          if (on_result) on_result(row);
          results.push_back(std::move(row));
        }
      }
  } catch (const Interrupted&) {
    // Ctrl-C: the kernel x batch in progress is dropped; the caller writes the finished ones.
  }
  return results;
}

}  // namespace convlab
