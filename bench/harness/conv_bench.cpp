#include "bench/harness/conv_bench.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "bench/check/tolerance.hpp"
#include "bench/harness/model_bench.hpp"
#include "bench/harness/prepared_conv.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "kernels/cpu/reference.hpp"
#include "models/network.hpp"
#include "bench/harness/gpu_model_bench.hpp"
#include "kernels/gpu/runtime.hpp"

namespace convlab {

namespace {

// The input 64-byte aligned, as a network's activations are (a std::vector's 16-byte alignment
// split a vector load in two cache lines and cost the kernels that read the input directly
// 5-10% more than those that copy it first).
struct Buffers {
  std::unique_ptr<float[], detail::AlignedFree> input_storage;
  std::span<float> input;  // in input_storage
  std::vector<float> weight, bias;
};

Buffers make_buffers(const ConvProblem& p, std::uint64_t seed) {
  const auto input_elems = static_cast<std::size_t>(p.input_elems());
  Buffers b{aligned_floats(input_elems), {}, std::vector<float>(static_cast<std::size_t>(p.weight_elems())),
            std::vector<float>(static_cast<std::size_t>(p.k))};
  b.input = {b.input_storage.get(), input_elems};
  fill_uniform(b.input, seed, 1);
  fill_uniform(b.weight, seed, 2);
  fill_uniform(b.bias, seed, 3);
  return b;
}

// Compares `out` with the oracle: every output for small problems, an evenly spread sample of
// kSampledOutputs for large ones (the oracle would take seconds there).
ErrorStats check_against_reference(const ConvProblem& p, const Buffers& b, const float* out) {
  return compare_outputs(p, [&](std::int64_t i, std::int64_t n, std::int64_t k, std::int64_t y, std::int64_t x) {
    const double ref = cpu::reference_output(p, b.input.data(), b.weight, b.bias, Activation::none, n, k, y, x);
    return std::pair{std::fabs(static_cast<double>(out[i]) - ref), ref};
  });
}

}  // namespace

std::string judge_accuracy(const ErrorStats& e, double error_scale) {
  const Tolerance tolerance = tolerance_for(error_scale);
  const double max_abs_tolerance = tolerance.peak_fraction * e.peak;
  if (e.normalised <= tolerance.normalised && e.max_abs <= max_abs_tolerance) return {};  // false for NaN
  return fmt::format("INVALID: differs from cpu.00_reference: normalised error {:.2g} (tolerance {:.2g}), max abs {:.2g} "
                     "(tolerance {:.2g}){}",
                     e.normalised, tolerance.normalised, e.max_abs, max_abs_tolerance,
                     std::isfinite(e.max_abs) ? "" : ": outputs NaN or Inf");
}

namespace {
// Where a kernel's input and output live while it is timed: host memory for the CPU, device
// memory (the input uploaded once) for CUDA; `result()` brings the output to the host.
struct ConvBuffers {
  const float* input = nullptr;
  float* output = nullptr;
  std::function<const float*()> result;
};

ConvBuffers host_buffers(const Buffers& b, std::unique_ptr<float[], detail::AlignedFree>& output, std::int64_t elems) {
  output = aligned_floats(static_cast<std::size_t>(elems));
  float* out = output.get();
  return {b.input.data(), out, [out] { return out; }};
}

// An FP32 kernel planned for one problem, its output checked against the oracle. Held by
// pointer: `io` and the run closures point into it.
struct PreparedFp32 final : PreparedConv {
  Buffers buffers;
  std::unique_ptr<PlannedConv> planned;
  std::unique_ptr<float[], detail::AlignedFree> workspace, host_output;
  std::optional<gpu::DeviceBuffer> device_in, device_out;
  ConvBuffers io;

  void run() const override { planned->run(io.input, io.output, workspace.get()); }
  bool changes_layout() const override { return planned->changes_layout(); }
  void run_layout_changes_only() const override {
    planned->run_layout_changes_only(io.input, io.output, workspace.get());
  }
};

// Plans `info` on `p`, runs it once and checks its output against the oracle (filling r's
// memory account, accuracy and error); the GPU device is made with the first GPU kernel.
std::unique_ptr<PreparedConv> prepare_fp32(const KernelInfo& info, const ConvProblem& p, std::uint64_t seed,
                                           Device& cpu, std::unique_ptr<Device>& gpu, Result& r) {
  auto k = std::make_unique<PreparedFp32>();
  k->buffers = make_buffers(p, seed);
  const Buffers& b = k->buffers;
  k->planned = info.plan(p, ConvWeights{b.weight, b.bias}, Epilogue{});
  if (std::string why = k->planned->explain(); !why.empty()) r.choices.push_back(std::move(why));
  r.effective_flops = k->planned->effective_flops();
  k->workspace = aligned_floats((k->planned->workspace_bytes() + sizeof(float) - 1) / sizeof(float));
  r.model_memory = {.weights_bytes = k->planned->weight_bytes(),
                    .activations_bytes = static_cast<std::size_t>(p.input_elems() + p.output_elems()) * sizeof(float),
                    .workspace_bytes = k->planned->workspace_bytes()};
  k->io = host_buffers(b, k->host_output, p.output_elems());
  k->device = &cpu;
  if (info.backend != Backend::cpu) {  // a GPU kernel takes device pointers
    gpu::GpuRuntime& rt = *gpu_runtime(info.backend);  // available: checked by the caller
    k->device_in.emplace(rt, b.input.size());
    k->device_out.emplace(rt, static_cast<std::size_t>(p.output_elems()));
    rt.upload(k->device_in->data(), b.input.data(), b.input.size());
    PreparedFp32* self = k.get();
    k->io = {self->device_in->data(), self->device_out->data(), [&rt, self] {
               rt.download(self->host_output.get(), self->device_out->data(), self->device_out->size());
               rt.synchronize();
               return static_cast<const float*>(self->host_output.get());
             }};
    if (!gpu) gpu = make_gpu_device(rt);
    k->device = gpu.get();
  }
  k->run();  // the check comes before any timing
  r.accuracy = check_against_reference(p, b, k->io.result());
  r.error = judge_accuracy(*r.accuracy, info.error_scale);
  return k;
}

// r's timings from its measurement, and its layout changes timed alone.
void summarize_into(Result& r, Measurement m, const PreparedConv& k, const ConvBenchConfig& config, Clock& clock) {
  r.measurement = std::move(m);
  r.latency = summarize(r.measurement.samples_ms, config.method);
  if (!r.measurement.device_samples_ms.empty())
    r.device_latency = summarize(r.measurement.device_samples_ms, config.method);
  if (k.changes_layout())
    r.layout_ms = summarize(measure([&k] { k.run_layout_changes_only(); }, *k.device, kLayoutProtocol, clock).samples_ms).p50;
}

void mark_out_of_memory(Result& r) {
  r.status = ResultStatus::out_of_memory;
  r.accuracy.reset();
  r.error = fmt::format("out of memory at batch {}", r.batch);
}

// A kernel of the configured precision, found by id: whose it is, whether it can run the problem
// here, and how to prepare it.
struct Candidate {
  Backend backend = Backend::cpu;
  bool runs = false;  // its backend is available and it supports the problem
  std::function<std::unique_ptr<PreparedConv>(Result&)> prepare;
};

Candidate find_candidate(const std::string& id, const ConvBenchConfig& config, const ConvProblem& p, Device& cpu,
                         std::unique_ptr<Device>& gpu) {
  if (config.precision == Precision::int8) {
    const Int8KernelInfo* info = find_int8_kernel(id);
    if (info == nullptr) throw InputError(fmt::format("--kernel: unknown int8 kernel '{}'", id));
    return {info->backend, backend_status(info->backend).available && info->supports(p),
            [info, &p, &config, &cpu, &gpu](Result& r) { return prepare_int8(*info, p, config.seed, cpu, gpu, r); }};
  }
  const KernelInfo* info = find_kernel(id);
  if (info == nullptr) throw InputError(fmt::format("--kernel: unknown kernel '{}'", id));
  return {info->backend, backend_status(info->backend).available && info->supports(p),
          [info, &p, &config, &cpu, &gpu](Result& r) { return prepare_fp32(*info, p, config.seed, cpu, gpu, r); }};
}

// Every kernel of the configured backend and precision that supports p, in list order.
std::vector<std::string> default_kernels(const ConvBenchConfig& config, const ConvProblem& p) {
  std::vector<std::string> ids;
  if (config.precision == Precision::int8) {
    for (const Int8KernelInfo& k : all_int8_kernels())
      if (k.backend == config.backend && k.supports(p)) ids.emplace_back(k.id);
  } else {
    for (const KernelInfo& k : all_kernels())
      if (k.backend == config.backend && k.supports(p)) ids.emplace_back(k.id);
  }
  return ids;
}

}  // namespace

std::vector<Result> run_conv_bench(const ConvBenchConfig& config, const std::function<void(const Result&)>& on_result) {
  std::unique_ptr<Device> cpu = make_device(Backend::cpu), gpu;  // gpu: made with the first GPU kernel
  SteadyClock clock;
  std::vector<Result> results;
  for (const NamedProblem& np : config.problems) {
    const std::vector<std::int64_t> batches = config.batches.empty() ? std::vector{np.problem.n} : config.batches;
    for (const std::int64_t batch : batches) {
      const ConvProblem p = np.problem.with_batch(batch);
      const std::vector<std::string> ids = config.kernels.empty() ? default_kernels(config, p) : config.kernels;
      // One at a time: each kernel planned, checked, timed and freed before the next. Interleaved:
      // all planned and checked first, then timed together round by round (measure_interleaved;
      // the oracle alone after the rounds).
      std::vector<Result> rows;
      std::vector<std::unique_ptr<PreparedConv>> prepared;  // interleaved: rows[i]'s kernel, or null
      RowMemoryProbe set_memory;  // interleaved: the kernels' memory is held together, no row's own
      if (config.interleave) set_memory.start();
      for (const std::string& id : ids) {
        const Candidate candidate = find_candidate(id, config, p, *cpu, gpu);
        if (!candidate.runs) continue;  // listed as unsupported
        Result& r = rows.emplace_back(Result{
            .problem = to_string(p), .role = np.role, .backend = std::string(to_string(candidate.backend)), .kernel = id,
            .precision = config.precision, .batch = batch, .threads = omp_get_max_threads(), .interleaved = config.interleave,
            .protocol = config.protocol, .method = config.method, .flops_per_item = p.with_batch(1).flops(),
            .peak_gflops = config.peak_gflops});
        std::unique_ptr<PreparedConv> k;
        RowMemoryProbe memory;
        if (!config.interleave) memory.start();
        try {
          k = candidate.prepare(r);
          if (!r.error.empty()) {  // judged, never timed: its numbers would only mislead
            r.status = ResultStatus::invalid;
            k.reset();
          } else if (!config.interleave) {
            const PreparedConv& one = *k;
            Measurement m = measure([&one] { one.run(); }, *one.device, config.protocol, clock);
            r.row_memory = memory.finish(m.rss_before_bytes);  // before the layout timing resets the peak
            summarize_into(r, std::move(m), one, config, clock);
            k.reset();
          }
        } catch (const std::bad_alloc&) {
          k.reset();
          mark_out_of_memory(r);
        }
        prepared.push_back(std::move(k));
      }
      if (config.interleave) {
        std::vector<Workload> workloads;
        std::vector<std::size_t> rows_timed;
        for (std::size_t i = 0; i < rows.size(); ++i)
          if (const PreparedConv* k = prepared[i].get()) {
            workloads.push_back({[k] { k->run(); }, k->device, is_oracle(rows[i].kernel)});
            rows[i].interleaved = !workloads.back().alone;
            rows_timed.push_back(i);
          }
        try {
          std::vector<Measurement> m = measure_interleaved(workloads, config.protocol, clock);
          RowMemory shared = set_memory.finish(m.empty() ? 0 : m.front().rss_before_bytes);
          shared.own = false;
          for (std::size_t j = 0; j < rows_timed.size(); ++j) {
            rows[rows_timed[j]].row_memory = shared;
            summarize_into(rows[rows_timed[j]], std::move(m[j]), *prepared[rows_timed[j]], config, clock);
          }
        } catch (const std::bad_alloc&) {
          for (const std::size_t i : rows_timed) mark_out_of_memory(rows[i]);
        }
      }
      for (Result& r : rows) {
        if (on_result) on_result(r);
        results.push_back(std::move(r));
      }
    }
  }
  return results;
}

namespace {
// The oneDNN baseline that a row of this precision is compared with.
std::string_view onednn_id(Precision precision) { return precision == Precision::int8 ? "onednn.conv_int8" : "onednn.conv"; }

// A choosing kernel's explanation starts "chose <id>, ..." (or "chose <id> (the only ..."); empty
// where it does not (cpu.auto_int8's "inputs under 128: ...").
std::string chosen_kernel(const std::string& why) {
  return why.rfind("chose ", 0) == 0 ? why.substr(6, why.find_first_of(", (", 6) - 6) : std::string();
}

// The explanation's summaries, its timings left to the JSON: "chose A, 8.0% ahead of B", and where
// A's plan chose too (cpu.02's or cpu.23's register tile), "; A: register tile 2 x 14".
std::string choice_summary(const std::string& why) {
  std::string out = why.substr(0, why.find(" (medians"));
  const std::string chosen = chosen_kernel(why);
  if (const std::size_t plan = why.find("; " + chosen + ": "); !chosen.empty() && plan != std::string::npos) {
    const std::string plan_why = why.substr(plan);
    out += plan_why.substr(0, plan_why.find(" (medians"));
  }
  return out;
}

// One of our kernels that compete on speed: neither a library nor an oracle.
bool ours_to_compare(const Result& r) {
  if (r.precision == Precision::int8) {
    const Int8KernelInfo* info = find_int8_kernel(r.kernel);
    return info != nullptr && !info->baseline && !is_oracle(r.kernel);
  }
  const KernelInfo* info = find_kernel(r.kernel);
  return info != nullptr && !info->baseline && !is_oracle(r.kernel);
}
}  // namespace

std::string best_versus_onednn_summary(const std::vector<Result>& results) {
  struct Pair {
    double best = 0, onednn = 0;
    std::string best_kernel;
  };
  // precision -> batch -> problem -> timings
  std::map<Precision, std::map<std::int64_t, std::map<std::string, Pair>>> by_precision;
  for (const Result& r : results) {
    if (r.status != ResultStatus::ok) continue;
    Pair& pair = by_precision[r.precision][r.batch][r.problem];
    if (r.kernel == onednn_id(r.precision)) {
      pair.onednn = r.latency.p50;
    } else if (ours_to_compare(r) && (pair.best == 0 || r.latency.p50 < pair.best)) {
      pair.best = r.latency.p50;
      pair.best_kernel = r.kernel;
    }
  }
  std::string out;
  for (const auto& [precision, by_batch] : by_precision)
    for (const auto& [batch, problems] : by_batch) {
      double log_sum = 0;
      int count = 0, wins = 0;
      for (const auto& [problem, pair] : problems) {
        if (pair.best == 0 || pair.onednn == 0) continue;
        log_sum += std::log(pair.onednn / pair.best);
        ++count;
        wins += pair.best < pair.onednn;
      }
      if (count > 0)
        out += fmt::format("batch {}: best of ours vs {} over {} problems: geometric mean {:.2f}x faster ({} of {} won)\n",
                           batch, onednn_id(precision), count, std::exp(log_sum / count), wins, count);
    }
  return out;
}

std::string auto_versus_best_summary(const std::vector<Result>& results) {
  struct Problem {
    double automatic = 0;  // cpu.auto's own row
    std::string chosen;
    std::map<std::string, double> ours;  // our other kernels' p50, by id
  };
  std::map<std::int64_t, std::map<std::string, Problem>> by_batch;  // batch -> problem -> timings
  for (const Result& r : results) {
    if (r.status != ResultStatus::ok) continue;
    const KernelInfo* info = find_kernel(r.kernel);
    Problem& problem = by_batch[r.batch][r.problem];
    if (r.kernel == "cpu.auto") {
      problem.automatic = r.latency.p50;
      if (!r.choices.empty()) problem.chosen = chosen_kernel(r.choices[0]);
    } else if (info != nullptr && info->backend == Backend::cpu && !info->baseline && !is_oracle(r.kernel)) {
      problem.ours[r.kernel] = r.latency.p50;
    }
  }
  std::string out;
  for (const auto& [batch, problems] : by_batch) {
    int count = 0, within = 0;
    double worst = 0;
    std::string worst_text;
    for (const auto& [descriptor, problem] : problems) {
      if (problem.automatic == 0 || problem.ours.empty()) continue;
      const auto best = std::ranges::min_element(problem.ours, {}, [](const auto& kv) { return kv.second; });
      // The chosen kernel as timed in its own row: cpu.auto's row runs the same code, and the two
      // differ by the machine's noise alone, which would blame the choice.
      const auto chosen = problem.ours.find(problem.chosen);
      const double ratio = (chosen != problem.ours.end() ? chosen->second : problem.automatic) / best->second;
      ++count;
      if (ratio <= 1 + kAutoWithin) {
        ++within;
      } else if (ratio > worst) {
        worst = ratio;
        worst_text = fmt::format("{:.2f}x: chose {} where {} was faster, on {}", ratio,
                                 problem.chosen.empty() ? "?" : problem.chosen, best->first, descriptor);
      }
    }
    if (count == 0) continue;
    out += fmt::format("batch {}: cpu.auto chose a kernel within {:.0f}% of the best other kernel of ours on {} of {} problems",
                       batch, 100 * kAutoWithin, within, count);
    out += worst_text.empty() ? "\n" : fmt::format("; worst {}\n", worst_text);
  }
  return out;
}

std::string conv_table_block(const NamedProblem& np, std::int64_t batch, const std::vector<Result>& results) {
  const std::string descriptor = to_string(np.problem.with_batch(batch));
  // A block holds one precision (conv runs one per invocation): int8 rows count operations and quanta.
  const auto first = std::ranges::find(results, descriptor, &Result::problem);
  const Precision precision = first != results.end() ? first->precision : Precision::fp32;
  const bool int8 = precision == Precision::int8;
  std::string out = fmt::format("\n{}{}\n", descriptor, np.role.empty() ? "" : "  (" + np.role + ")");
  out += fmt::format("  {:<24} {:>10} {:>10} {:>9} {:>9} {:>6} {:>9} {:>10} {:>10}  {}\n", "kernel", "p50 ms", "p95 ms",
                     "layout ms", int8 ? "GOP/s" : "GFLOP/s", "%peak", "vs onednn", int8 ? "max quanta" : "max abs",
                     "norm err", "flags");
  const Result* onednn = nullptr;
  for (const Result& r : results)
    if (r.problem == descriptor && r.kernel == onednn_id(precision) && r.status == ResultStatus::ok) onednn = &r;
  for (const Result& r : results) {
    if (r.problem != descriptor) continue;
    if (r.status != ResultStatus::ok) {
      out += fmt::format("  {:<24} {}\n", r.kernel, r.error);
      continue;
    }
    const std::string ratio = onednn != nullptr ? fmt::format("{:.2f}x", onednn->latency.p50 / r.latency.p50) : "-";
    const std::string layout = r.layout_ms ? fmt::format("{:.3f}", *r.layout_ms) : "-";
    const std::string peak = r.peak_gflops > 0 ? fmt::format("{:.1f}", r.percent_of_peak()) : "-";
    const std::string max_abs = int8 ? fmt::format("{:.0f}", r.accuracy->max_abs) : fmt::format("{:.2e}", r.accuracy->max_abs);
    out += fmt::format("  {:<24} {:>10.3f} {:>10.3f} {:>9} {:>9.1f} {:>6} {:>9} {:>10} {:>10.2e}  {}{}\n", r.kernel,
                       r.latency.p50, r.latency.p95, layout, r.gflops(), peak, ratio, max_abs,
                       r.accuracy->normalised, r.accuracy->sampled ? "sampled-check," : "", fmt::join(r.flags(), ","));
  }
  for (const Result& r : results)  // what the choosing kernels chose; the timings behind it are in the JSON
    if (r.problem == descriptor && r.status == ResultStatus::ok && !r.choices.empty())
      out += fmt::format("  {}: {}\n", r.kernel, choice_summary(r.choices[0]));
  return out;
}

}  // namespace convlab
