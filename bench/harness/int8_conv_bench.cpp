// `conv --precision int8`: an int8 kernel prepared for timing, checked against the int8 oracle.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "bench/harness/conv_bench.hpp"
#include "bench/harness/gpu_model_bench.hpp"
#include "bench/harness/int8_conv_data.hpp"
#include "bench/harness/prepared_conv.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/gpu/runtime.hpp"
#include "kernels/cpu/reference.hpp"

namespace convlab {

namespace {

// Held by pointer: in and out point into it (host buffers) or at its device buffers.
struct PreparedInt8 final : PreparedConv {
  Int8ConvData data;
  std::unique_ptr<PlannedInt8Conv> planned;
  // The host input (a copy of data.input) and output 64-byte aligned, as a network's
  // activations are: a std::vector's 16-byte alignment splits vector loads across cache lines.
  std::unique_ptr<float[], detail::AlignedFree> workspace, host_input, host_output;
  std::optional<gpu::DeviceBuffer> device_in, device_out;  // a GPU kernel's
  const std::uint8_t* in = nullptr;
  std::uint8_t* out = nullptr;

  void run() const override { planned->run(in, out, workspace.get()); }
  bool changes_layout() const override { return planned->changes_layout(); }
  void run_layout_changes_only() const override { planned->run_layout_changes_only(in, out, workspace.get()); }
};

// Every output of small problems, an evenly spread sample of large ones, as for FP32.
ErrorStats check_against_int8_reference(const ConvProblem& p, const Int8ConvData& d, Activation activation,
                                        const std::uint8_t* out) {
  const Requantization requantize = make_requantization(d.weights(), p.k, activation);
  return compare_outputs(p, [&](std::int64_t i, std::int64_t n, std::int64_t k, std::int64_t y, std::int64_t x) {
    const std::int32_t acc = cpu::int8_reference_accumulator(p, d.input.data(), d.weight, d.input_q.zero_point, n, k, y, x);
    const int ref = requantize(acc, k), got = out[i];
    return std::pair{static_cast<double>(std::abs(got - ref)), static_cast<double>(ref - d.output_q.zero_point)};
  });
}

}  // namespace

std::unique_ptr<PreparedConv> prepare_int8(const Int8KernelInfo& info, const ConvProblem& p, std::uint64_t seed,
                                           Device& cpu, std::unique_ptr<Device>& gpu, Result& r) {
  auto k = std::make_unique<PreparedInt8>();
  k->data = make_int8_conv_data(p, seed);
  k->planned = info.plan(p, k->data.weights(), Epilogue{});
  if (std::string why = k->planned->explain(); !why.empty()) r.choices.push_back(std::move(why));
  k->workspace = aligned_floats((k->planned->workspace_bytes() + sizeof(float) - 1) / sizeof(float));
  const auto in_bytes = static_cast<std::size_t>(p.input_elems()), out_bytes = static_cast<std::size_t>(p.output_elems());
  k->host_input = aligned_floats((in_bytes + sizeof(float) - 1) / sizeof(float));
  k->host_output = aligned_floats((out_bytes + sizeof(float) - 1) / sizeof(float));
  std::uint8_t* host_out = reinterpret_cast<std::uint8_t*>(k->host_output.get());
  std::copy(k->data.input.begin(), k->data.input.end(), reinterpret_cast<std::uint8_t*>(k->host_input.get()));
  k->in = reinterpret_cast<const std::uint8_t*>(k->host_input.get());
  k->out = host_out;
  k->device = &cpu;
  gpu::GpuRuntime* rt = info.backend == Backend::cpu ? nullptr : gpu_runtime(info.backend);  // available: checked
  if (rt != nullptr) {
    k->device_in.emplace(gpu::DeviceBuffer::of_bytes(*rt, k->data.input.size()));
    k->device_out.emplace(gpu::DeviceBuffer::of_bytes(*rt, out_bytes));
    rt->upload_bytes(k->device_in->data(), k->data.input.data(), k->data.input.size());
    k->in = reinterpret_cast<const std::uint8_t*>(k->device_in->data());
    k->out = reinterpret_cast<std::uint8_t*>(k->device_out->data());
    if (!gpu) gpu = make_gpu_device(*rt);
    k->device = gpu.get();
  }
  r.model_memory = {.weights_bytes = k->planned->weight_bytes(),
                    .activations_bytes = static_cast<std::size_t>(p.input_elems() + p.output_elems()),
                    .workspace_bytes = k->planned->workspace_bytes()};
  k->run();  // the check comes before any timing
  if (rt != nullptr) rt->download_bytes(host_out, k->out, out_bytes);
  r.accuracy = check_against_int8_reference(p, k->data, Activation::none, host_out);
  if (!(r.accuracy->max_abs <= info.max_quanta))
    r.error = fmt::format("INVALID: differs from cpu.20_int8_reference by up to {:.0f} quanta (tolerance {}) over {} "
                          "outputs checked", r.accuracy->max_abs, info.max_quanta, r.accuracy->checked);
  return k;
}

}  // namespace convlab
