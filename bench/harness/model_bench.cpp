#include "bench/harness/model_bench.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "bench/harness/forward_threads.hpp"
#include "bench/pipeline/end_to_end.hpp"
#include "bench/pipeline/fresh_process.hpp"
#include "bench/harness/gpu_model_bench.hpp"
#include "bench/harness/int8_model_bench.hpp"
#include "bench/harness/interrupt.hpp"
#include "bench/analysis/mistrust.hpp"
#include "bench/check/oracle.hpp"
#include "bench/check/validate.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/weight_file.hpp"

namespace convlab {

std::vector<std::string> kernels_for_model(const std::string& model, Backend backend) {
  const Network net = load_model(model, "", 1);
  std::vector<std::string> ids;
  for (const KernelInfo& k : all_kernels())
    if (k.backend == backend && unsupported_reason(net, std::string(k.id)).empty()) ids.emplace_back(k.id);
  return ids;
}

void fill_model_input(const Network& net, std::span<float> input, std::uint64_t seed) {
  const auto item = static_cast<std::size_t>(net.input_item().elems());
  for (std::size_t at = 0; at + item <= input.size(); at += item) fill_uniform(input.subspan(at, item), seed, 0);
}

std::unique_ptr<Device> make_device(Backend backend) {
  if (!backend_status(backend).available) return nullptr;
  switch (backend) {
    case Backend::cpu: return std::make_unique<CpuDevice>();
    case Backend::cuda:
    case Backend::metal:
      if (gpu::GpuRuntime* rt = gpu_runtime(backend)) return make_gpu_device(*rt);
      return nullptr;
  }
  return nullptr;
}

void measure_forward(const ModelBenchConfig& config, const Network& net, std::span<float> input,
                     const std::function<void()>& forward, Device& device, Clock& clock, Result& r) {
  if (!config.images) {
    r.measurement = measure(forward, device, config.protocol, clock);
    return;
  }
  EndToEndPass pass(*config.images, net.input_item(), input, forward);
  r.measurement = measure([&pass] { pass(); }, device, config.protocol, clock);
  r.stages = pass.medians(static_cast<std::size_t>(config.protocol.trials));
  r.mode = "end-to-end";
  r.images = config.images->source;
}

Result model_row(const ModelBenchConfig& config, const Network& net, const std::string& kernel, std::int64_t batch) {
  const bool int8 = find_int8_kernel(kernel) != nullptr;
  Result r{.model = config.model, .backend = std::string(to_string(config.backend)), .kernel = kernel,
           .precision = int8 ? Precision::int8 : Precision::fp32, .batch = batch, .threads = omp_get_max_threads(),
           .protocol = config.protocol, .method = config.method, .flops_per_item = net.flops_per_item(),
           .peak_gflops = int8 ? config.peak_int8_gops : config.peak_gflops};
  if (int8) r.quantization_options = quantization_options(config);
  return r;
}

namespace {

// One FP32 kernel at one batch, planned (the check against the oracle comes in its finish).
PlannedModelRow plan_fp32_row(const ModelBenchConfig& config, const Network& net, Device& device, Clock& clock,
                              const std::string& id, std::int64_t batch) {
  PlannedModelRow row{.result = model_row(config, net, id, batch)};
  const PlannedForward planned = plan_forward(net, config.model, batch, id, config.seed);
  const std::shared_ptr<NetworkPlan>& plan = planned.plan;
  Result& r = row.result;
  r.on_one_thread = planned.threads < omp_get_max_threads();
  r.model_memory = plan->memory();
  r.effective_flops = plan->effective_flops();
  for (std::size_t i = 0; i < net.layers().size(); ++i)
    if (std::string why = plan->explain(static_cast<int>(i)); !why.empty())
      r.choices.push_back(net.layers()[i].name + ": " + why);
  if (!planned.why.empty()) r.choices.push_back("forward: " + planned.why);
  row.input = plan->input().span();
  row.forward = [planned] { planned.forward(); };
  row.finish = [planned, &config, &net, &device, &clock, id](Result& r) {
    const cpu::ScopedMaxThreads scope(planned.threads);  // the layout changes, the profile and the check too
    const std::shared_ptr<NetworkPlan>& plan = planned.plan;
    if (plan->has_layout_changes())
      r.layout_ms = summarize(measure([&plan] { plan->layout_changes_only(); }, device, kLayoutProtocol, clock).samples_ms).p50;
    r.latency = summarize(r.measurement.samples_ms, config.method);
    if (!r.measurement.device_samples_ms.empty())
      r.device_latency = summarize(r.measurement.device_samples_ms, config.method);
    if (config.per_layer) r.layer_times = profile_layers(*plan, net, config.protocol);
    // Either way the activations then hold a fresh forward's, for the constant-output check.
    std::string why;
    if (id == kFp32Oracle) plan->forward();
    else why = differs_from_reference(net, *plan, find_kernel(id)->error_scale);
    if (!why.empty()) {
      r.status = ResultStatus::invalid;
      r.error = std::move(why);
    } else {
      r.mistrusted = mistrusted_reason(net, *plan);
    }
  };
  return row;
}

Result out_of_memory_row(const ModelBenchConfig& config, const Network& net, const std::string& id, std::int64_t batch) {
  Result r = model_row(config, net, id, batch);
  r.status = ResultStatus::out_of_memory;
  r.error = fmt::format("out of memory at batch {}", batch);
  return r;
}

// A row of `id` at `batch` (FP32 or int8), planned; its memory account starts before the plan.
using PlanRow = std::function<PlannedModelRow(const std::string& id, std::int64_t batch)>;

// One row planned, timed alone and finished; its memory its own.
Result measure_alone(const ModelBenchConfig& config, const Network& net, Device& device, Clock& clock,
                     const PlanRow& plan_row, const std::string& id, std::int64_t batch) {
  RowMemoryProbe memory;
  memory.start();  // before the plan: its buffers are the row's
  try {
    PlannedModelRow row = plan_row(id, batch);
    measure_forward(config, net, row.input, row.forward, device, clock, row.result);
    row.result.row_memory = memory.finish(row.result.measurement.rss_before_bytes);  // before other measurements reset the peak
    row.finish(row.result);
    return std::move(row.result);
  } catch (const std::bad_alloc&) {
    return out_of_memory_row(config, net, id, batch);
  }
}

// The rows of one batch planned together, then timed round by round (measure_interleaved, the
// oracle alone after the rounds), as `conv --interleave` does; their memory is the set's.
std::vector<Result> measure_interleaved_rows(const ModelBenchConfig& config, const Network& net, Device& device,
                                             Clock& clock, const PlanRow& plan_row, std::int64_t batch) {
  RowMemoryProbe set_memory;
  set_memory.start();
  std::vector<std::optional<PlannedModelRow>> rows;  // empty: no memory for its plan
  for (const std::string& id : config.kernels) {
    try {
      rows.emplace_back(plan_row(id, batch));
    } catch (const std::bad_alloc&) {
      rows.emplace_back();
    }
  }
  std::vector<Workload> workloads;
  std::vector<std::size_t> timed;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i]) {
      workloads.push_back({rows[i]->forward, &device, is_oracle(rows[i]->result.kernel)});
      rows[i]->result.interleaved = !workloads.back().alone;
      timed.push_back(i);
    }
  try {
    std::vector<Measurement> m = measure_interleaved(workloads, config.protocol, clock);
    RowMemory shared = set_memory.finish(m.empty() ? 0 : m.front().rss_before_bytes);
    shared.own = false;
    for (std::size_t j = 0; j < timed.size(); ++j) {
      Result& r = rows[timed[j]]->result;
      r.measurement = std::move(m[j]);
      r.row_memory = shared;
      rows[timed[j]]->finish(r);
    }
  } catch (const std::bad_alloc&) {
    for (auto& row : rows) row.reset();  // every row of the set: out of memory
  }
  std::vector<Result> results;
  for (std::size_t i = 0; i < rows.size(); ++i)
    results.push_back(rows[i] ? std::move(rows[i]->result) : out_of_memory_row(config, net, config.kernels[i], batch));
  return results;
}

}  // namespace

std::vector<Result> run_model_bench(const ModelBenchConfig& config, const std::function<void(const Result&)>& on_result) {
  const Network net = load_model(config.model, config.weights, config.seed);
  std::optional<QuantizedNetwork> quantized;  // made once, for the int8 kernels
  std::optional<QuantizationEffect> effect;
  for (const std::string& id : config.kernels) {
    if (const Int8KernelInfo* int8 = find_int8_kernel(id)) {
      if (int8->backend != config.backend)
        throw InputError(fmt::format("kernel '{}' belongs to backend {}, not {}", id, to_string(int8->backend),
                                     to_string(config.backend)));
      if (!quantized) {
        quantized.emplace(quantize_for_run(config, net));
        effect = quantization_effect_for_run(config, *quantized);
      }
      continue;
    }
    const KernelInfo* info = find_kernel(id);
    if (info == nullptr) throw InputError(fmt::format("unknown kernel '{}'", id));
    if (info->backend != config.backend)
      throw InputError(fmt::format("kernel '{}' belongs to backend {}, not {}", id, to_string(info->backend),
                                   to_string(config.backend)));
    if (std::string why = unsupported_reason(net, id); !why.empty()) throw InputError(why);
  }
  std::unique_ptr<Device> device = make_device(config.backend);
  if (device == nullptr)
    throw InputError(fmt::format("backend {} is not available: {}", to_string(config.backend),
                                 backend_status(config.backend).detail));
  if (config.backend != Backend::cpu && (config.images || config.fresh_processes > 0))
    throw InputError(fmt::format("{} runs on the CPU backend only for now",
                                 config.images ? "--end-to-end" : "--fresh-process"));
  if (gpu::GpuRuntime* rt = gpu_runtime(config.backend)) {
    if (!quantized) return run_gpu_model_bench(config, net, *rt, on_result);
    const Int8Model int8{*quantized, *effect};
    return run_gpu_model_bench(config, net, *rt, on_result, &int8);
  }
  if (config.cuda_graph) throw InputError("--cuda-graph applies to --backend cuda only");
  if (!config.fuse) throw InputError("--no-fuse applies to the GPU backends (cuda, metal) only");
  SteadyClock clock;
  const PlanRow plan_row = [&](const std::string& id, std::int64_t batch) {
    return find_int8_kernel(id) != nullptr ? plan_int8_row(config, *quantized, id, batch)
                                           : plan_fp32_row(config, net, *device, clock, id, batch);
  };
  std::vector<Result> results;
  const auto add = [&](Result r) {
    if (r.precision == Precision::int8) r.quantization = effect;
    results.push_back(std::move(r));
    if (on_result) on_result(results.back());
  };
  try {
    if (config.interleave) {
      for (const std::int64_t batch : config.batches)
        for (Result& r : measure_interleaved_rows(config, net, *device, clock, plan_row, batch)) add(std::move(r));
      return results;
    }
    for (const std::string& id : config.kernels)
      for (const std::int64_t batch : config.batches) {
        Result r = measure_alone(config, net, *device, clock, plan_row, id, batch);
        // After the plan above is gone: the new processes compete with nothing of this one's.
        if (config.fresh_processes > 0 && r.status == ResultStatus::ok) r.fresh = measure_fresh_processes(config, id, batch);
        add(std::move(r));
      }
  } catch (const Interrupted&) {
    // Ctrl-C: the result in progress is dropped; the caller sees interrupted() and writes the
    // finished ones, marked incomplete.
  }
  return results;
}

}  // namespace convlab
