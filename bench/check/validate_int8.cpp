#include "bench/check/validate_int8.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

namespace {

struct QuantaDiff {
  double max = 0, off_share = 0, max_abs = 0, peak = 0, normalised = 0;
  std::int64_t off = 0;  // elements a quantum or more apart
  bool finite = true;
};

QuantaDiff diff_in_quanta(std::span<const float> got, std::span<const float> expect, float scale) {
  QuantaDiff q;
  q.finite = got.size() == expect.size();
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < expect.size() && q.finite; ++i) {
    q.finite = std::isfinite(got[i]);
    const double d = std::abs(double(got[i]) - double(expect[i])), ref = std::abs(double(expect[i]));
    q.max_abs = std::max(q.max_abs, d);
    q.peak = std::max(q.peak, ref);
    q.off += d / scale >= 0.5;  // both sides sit on the layer's grid: half a quantum apart is one apart
    diff2 += d * d;
    ref2 += ref * ref;
  }
  // The grid is the same on both sides up to the float rounding of scale * (q - zero_point).
  q.max = std::nearbyint(q.max_abs / scale * 1e3) / 1e3;
  q.off_share = expect.empty() ? 0 : double(q.off) / double(expect.size());
  q.normalised = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return q;
}

// What validation asks of an int8 plan, the CPU's (Int8NetworkPlan) or a GPU runtime's
// (GpuInt8NetworkPlan): the whole forward from an FP32 input, one layer's output dequantised (the
// last layer's is the logits), and a layer's input buffer set.
void forward(Int8NetworkPlan& plan, std::span<const float> input) {
  std::ranges::copy(input, plan.input().data());
  plan.forward();
}
void forward(GpuInt8NetworkPlan& plan, std::span<const float> input) {
  std::ranges::copy(input, plan.input().data());
  plan.upload_input();
  plan.forward();
}
// The reference's values of layer `index`'s output (or the network's input) quantised into the
// plan's quint8 buffer: they sit on the same grid, so quantising recovers the reference's bytes.
std::vector<std::uint8_t> quantized(std::span<const float> values, QuantParams quant) {
  std::vector<std::uint8_t> bytes(values.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = quantize_u8(values[i], quant);
  return bytes;
}
void feed(Int8NetworkPlan& plan, int index, std::span<const float> values, QuantParams quant) {
  std::ranges::copy(quantized(values, quant), plan.activation_bytes(index).begin());
}
void feed(GpuInt8NetworkPlan& plan, int index, std::span<const float> values, QuantParams quant) {
  plan.set_activation_bytes(index, quantized(values, quant));
}

}  // namespace

std::vector<std::string> int8_kernels_covering(const Network& net, std::int64_t batch, Backend backend) {
  std::vector<std::string> ids;
  for (const Int8KernelInfo& k : all_int8_kernels()) {
    if (k.backend != backend) continue;
    for (const Layer& l : net.layers())
      if (has_int8_weights(l) && k.supports(int8_problem(net, l, batch))) {
        ids.emplace_back(k.id);
        break;
      }
  }
  return ids;
}

namespace {

template <class Plan>
KernelValidation validate_on(Plan& plan, const QuantizedNetwork& q, const StoredTensor& input, const TensorFile& expect,
                             const std::string& kernel_id) {
  const Network& net = q.network();
  const auto& layers = net.layers();
  const std::int64_t batch = input.shape.at(0);
  KernelValidation v{.kernel = kernel_id, .tolerance = {.quanta = kInt8Quanta, .off_share = kInt8OffShare}};
  // The layers the kernel supports (cpu.auto_int8's run the kernel it chose for them).
  const Int8KernelInfo* info = find_int8_kernel(kernel_id);
  for (const Layer& l : layers) {
    if (!has_int8_weights(l)) continue;
    ++v.conv_layers;
    v.conv_layers_run += info->supports(int8_problem(net, l, batch));
  }
  if (v.conv_layers_run == 0)
    throw InputError(fmt::format("{} supports no conv or linear layer of {} at batch {}", kernel_id, net.name(), batch));
  const auto tap = [&expect, &layers](int index) -> const std::vector<float>* {
    if (index == Network::kNetworkInput) return nullptr;
    const auto it = expect.tensors.find(layers[static_cast<std::size_t>(index)].name);
    return it == expect.tensors.end() ? nullptr : &it->second.values;
  };

  // The whole network from the input, as `run` runs it: how far one-quantum differences drift.
  forward(plan, input.values);
  std::vector<QuantaDiff> chained(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (const auto* want = tap(static_cast<int>(i)))
      chained[i] = diff_in_quanta(plan.dequantized(static_cast<int>(i)), *want, q.activation(static_cast<int>(i)).scale);
  const int last = static_cast<int>(layers.size()) - 1;
  const float out_scale = q.activation(last).scale;
  const std::vector<float> out_logits = plan.dequantized(last);
  const QuantaDiff out = diff_in_quanta(out_logits, expect.tensors.at("output").values, out_scale);

  // Each layer on the reference's inputs: only its own rounding can differ (the judged numbers).
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto* want = tap(static_cast<int>(i));
    if (want == nullptr) continue;
    LayerComparison c{.layer = layers[i].name, .elems = static_cast<std::int64_t>(want->size()),
                      .scale = q.activation(static_cast<int>(i)).scale, .chained_quanta = chained[i].max,
                      .chained_off_share = chained[i].off_share};
    const bool has_inputs = std::ranges::all_of(layers[i].inputs, [&](int in) {
      return in == Network::kNetworkInput || tap(in) != nullptr;
    });
    if (has_inputs) {
      for (const int in : layers[i].inputs)
        feed(plan, in, in == Network::kNetworkInput ? std::span<const float>(input.values) : *tap(in), q.activation(in));
      plan.run_layer(static_cast<int>(i));
      const QuantaDiff d = diff_in_quanta(plan.dequantized(static_cast<int>(i)), *want, c.scale);
      c.max_abs = d.max_abs;
      c.peak = d.peak;
      c.normalised = d.normalised;
      c.max_quanta = d.max;
      c.off_share = d.off_share;
      c.pass = d.finite && d.max <= v.tolerance.quanta && (d.off_share <= v.tolerance.off_share || d.off <= 1);
      c.judged = true;
    } else {
      c.judged = false;
      c.pass = chained[i].finite;  // nothing to judge it by: its inputs are not in the expect file
    }
    v.layers.push_back(c);
  }
  v.layers.push_back({.layer = "output", .elems = static_cast<std::int64_t>(out_logits.size()), .max_abs = out.max_abs,
                      .normalised = out.normalised, .peak = out.peak, .scale = out_scale, .chained_quanta = out.max,
                      .chained_off_share = out.off_share, .judged = false, .pass = out.finite});
  judge_top1(v, out_logits, expect.tensors.at("output").values, batch, kInt8ChainedTieQuanta * out_scale);
  return v;
}

}  // namespace

KernelValidation validate_int8_kernel(const QuantizedNetwork& q, const StoredTensor& input, const TensorFile& expect,
                                      const std::string& kernel_id, gpu::GpuRuntime* gpu) {
  const std::int64_t batch = input.shape.at(0);
  if (gpu != nullptr) {
    GpuInt8NetworkPlan plan(q, batch, kernel_id, *gpu);  // throws for an id that is not the runtime's
    return validate_on(plan, q, input, expect, kernel_id);
  }
  Int8NetworkPlan plan(q, batch, kernel_id);  // throws for an unknown id
  return validate_on(plan, q, input, expect, kernel_id);
}

}  // namespace convlab
