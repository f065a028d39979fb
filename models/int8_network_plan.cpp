// What runs kernels for an int8 network (models/quantized_network.hpp): the calibration forward
// that sets the activations' quantisation, and the int8 executor. Apart from
// quantized_network.cpp, which only holds the quantised model, so that the int8 file loader and its
// fuzz target need no kernel.
#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/timing_memory.hpp"
#include "kernels/cpu/ops.hpp"
#include "models/observer.hpp"
#include "models/quantized_network.hpp"

namespace convlab {

namespace {

constexpr const char* kOracle = "cpu.20_int8_reference";
// The FP32 kernel that runs calibration: every problem, and exactly rounded sums are not needed
// for a range.
constexpr const char* kCalibrationKernel = "cpu.01_im2col_eigen";

// For a layer the chosen kernel does not support: the first other kernel of ours that does (the
// depthwise one, for a depthwise layer), else the oracle.
const Int8KernelInfo* fallback(const ConvProblem& p) {
  for (const Int8KernelInfo& k : all_int8_kernels())
    if (k.backend == Backend::cpu && !k.baseline && k.id != kOracle && k.supports(p)) return &k;
  return find_int8_kernel(kOracle);
}

// PyTorch's calibration loop feeds the observers batches of this many inputs
// (tools/torch_quantize.py): what a histogram observer makes of them depends on it.
constexpr std::int64_t kCalibrationBatch = 16;

// One activation's observer, of the kind asked for.
struct ActivationObserver {
  Observer kind;
  MinMaxObserver minmax;
  HistogramObserver histogram;
  std::int32_t quant_max = kQuantMax;
  void observe(std::span<const float> v) { kind == Observer::histogram ? histogram.observe(v) : minmax.observe(v); }
  QuantParams params() const { return kind == Observer::histogram ? histogram.params(quant_max) : minmax.params(quant_max); }
};

}  // namespace

QuantizedNetwork::QuantizedNetwork(const Network& net, std::span<const float> calibration, std::string source,
                                   Observer observer, std::int32_t quant_max)
    : net_(net), source_(std::move(source)) {
  const auto& layers = net.layers();
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (layers[i].kind == LayerKind::softmax && i + 1 != layers.size())
      throw InputError(fmt::format("{}: int8 runs a softmax only as the last layer, not {}", net.name(), layers[i].name));
  const std::int64_t item = net.input_item().elems();
  if (calibration.empty() || calibration.size() % static_cast<std::size_t>(item) != 0)
    throw InputError(fmt::format("calibration: {} values are not whole inputs of {} values", calibration.size(), item));
  // One observer for the input, one per layer output (a pool's goes unused: it keeps its input's).
  std::vector<ActivationObserver> observers(layers.size() + 1, ActivationObserver{.kind = observer, .quant_max = quant_max});
  const std::int64_t inputs = static_cast<std::int64_t>(calibration.size()) / item;
  std::optional<NetworkPlan> plan;
  for (std::int64_t first = 0; first < inputs; first += kCalibrationBatch) {
    const std::int64_t batch = std::min(kCalibrationBatch, inputs - first);
    if (!plan || plan->batch() != batch) plan.emplace(net, batch, KernelSelection{kCalibrationKernel, {}});
    std::copy_n(calibration.begin() + first * item, batch * item, plan->input().data());
    plan->forward();
    observers.back().observe(plan->input().span());
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (!keeps_input_quantisation(layers[i])) observers[i].observe(plan->activation(static_cast<int>(i)).span());
  }
  input_ = observers.back().params();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    activations_.push_back(keeps_input_quantisation(l) ? activation(l.inputs[0]) : observers[i].params());
    weights_.push_back(has_int8_weights(l) ? quantize_weights(l.weight, l.bias, l.out_item.c()) : QuantizedWeights{});
  }
}

Int8NetworkPlan::Int8NetworkPlan(const QuantizedNetwork& q, std::int64_t batch, const std::string& kernel_id)
    : q_(q), batch_(batch) {
  const ReuseTimingMemory reuse;  // the layers' plan-time timing, one set of pages (timing_memory.hpp)
  const Int8KernelInfo* chosen = find_int8_kernel(kernel_id);
  if (chosen == nullptr) throw InputError(fmt::format("unknown int8 kernel '{}'", kernel_id));
  if (chosen->backend != Backend::cpu)
    throw InputError(fmt::format("{} is a {} kernel: int8 networks run on the CPU for now", kernel_id, to_string(chosen->backend)));
  const Network& net = q.network();
  Shape in = net.input_item();
  in.dims[0] = batch;
  input_ = Tensor(in);
  quantized_input_.resize(static_cast<std::size_t>(input_.elems()));
  memory_.activations_bytes = input_.bytes() + quantized_input_.size();
  std::size_t workspace = 0;
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const Layer& l = net.layers()[i];
    activations_.emplace_back(l.kind == LayerKind::softmax ? 0 : static_cast<std::size_t>(l.out_item.item_elems() * batch));
    memory_.activations_bytes += activations_.back().size();
    kernel_ids_.emplace_back();
    convs_.emplace_back();
    if (!has_int8_weights(l)) continue;
    const ConvProblem p = int8_problem(net, l, batch);
    const Int8KernelInfo* info = chosen->supports(p) ? chosen : fallback(p);
    const QuantizedWeights& w = q.weights(static_cast<int>(i));
    const QuantParams x = q.activation(l.inputs[0]);
    const Activation a = l.kind == LayerKind::conv ? l.epilogue.activation : l.relu ? Activation::relu : Activation::none;
    convs_.back() = info->plan(p, {w.weight, w.weight_scale, w.bias, x, q.activation(static_cast<int>(i))}, Epilogue{a});
    const std::string picked = convs_.back()->chosen_kernel();
    kernel_ids_.back() = picked.empty() ? std::string(info->id) : picked;
    workspace = std::max(workspace, convs_.back()->workspace_bytes());
    memory_.weights_bytes += convs_.back()->weight_bytes();
  }
  Shape out = net.output_item();
  out.dims[0] = batch;
  output_ = Tensor(out);
  memory_.activations_bytes += output_.bytes();
  workspace_ = aligned_floats((workspace + sizeof(float) - 1) / sizeof(float));
  memory_.workspace_bytes = workspace;
}

const std::uint8_t* Int8NetworkPlan::bytes(int index) const {
  return index == Network::kNetworkInput ? quantized_input_.data() : activations_[static_cast<std::size_t>(index)].data();
}

void Int8NetworkPlan::forward() { forward_timed({}); }

void Int8NetworkPlan::forward_timed(std::span<double> layer_ms) {
  const auto& layers = q_.network().layers();
  if (!layer_ms.empty() && layer_ms.size() != layers.size())
    throw InputError(fmt::format("forward_timed: {} slots for {} layers", layer_ms.size(), layers.size()));
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = layer_ms.empty() ? Clock::time_point{} : Clock::now();  // forward() reads no clock
  ops::quantize(input_.data(), quantized_input_.data(), input_.elems(), q_.input());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    run_layer(static_cast<int>(i));
    if (i + 1 == layers.size() && layers.back().kind != LayerKind::softmax)  // (a softmax left its FP32 output there)
      ops::dequantize(activations_.back().data(), output_.data(), output_.elems(), q_.activation(static_cast<int>(i)));
    if (layer_ms.empty()) continue;
    const Clock::time_point end = Clock::now();
    layer_ms[i] = std::chrono::duration<double, std::milli>(end - start).count();
    start = end;
  }
}

void Int8NetworkPlan::run_layer(int index) {
  const Network& net = q_.network();
  const Layer& l = net.layers().at(index);
  const auto i = static_cast<std::size_t>(index);
  const int first = l.inputs[0];
  const std::uint8_t* x = bytes(first);
  Shape shape = layer_input_item(net, l);
  shape.dims[0] = batch_;
  std::uint8_t* out = activations_[i].data();
  switch (l.kind) {
    case LayerKind::conv:
    case LayerKind::linear: convs_[i]->run(x, out, workspace_.get()); break;
    case LayerKind::max_pool: ops::max_pool2d_u8(x, shape, out, l.pool); break;
    case LayerKind::avg_pool: ops::avg_pool2d_u8(x, shape, out, l.pool, q_.activation(index).zero_point); break;
    case LayerKind::global_avg_pool: ops::global_avg_pool_u8(x, shape, out); break;
    case LayerKind::add:
      ops::add_u8(x, q_.activation(first), bytes(l.inputs[1]), q_.activation(l.inputs[1]), out, q_.activation(index),
                  static_cast<std::int64_t>(activations_[i].size()), l.relu);
      break;
    case LayerKind::softmax:  // the last layer: FP32, on the dequantised logits (output_ holds them)
      ops::dequantize(x, output_.data(), output_.elems(), q_.activation(first));
      ops::softmax(output_.data(), batch_, l.out_item.c(), output_.data());
      break;
  }
}

std::span<std::uint8_t> Int8NetworkPlan::activation_bytes(int index) {
  if (index == Network::kNetworkInput) return quantized_input_;
  return activations_.at(static_cast<std::size_t>(index));
}

std::vector<float> Int8NetworkPlan::dequantized(int layer) const {
  if (q_.network().layers().at(layer).kind == LayerKind::softmax) return {output_.data(), output_.data() + output_.elems()};
  const std::vector<std::uint8_t>& a = activations_.at(layer);
  std::vector<float> out(a.size());
  ops::dequantize(a.data(), out.data(), static_cast<std::int64_t>(a.size()), q_.activation(layer));
  return out;
}

}  // namespace convlab
