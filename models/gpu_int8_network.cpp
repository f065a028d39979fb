#include "models/gpu_int8_network.hpp"

#include <chrono>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

namespace {
// Runs every conv problem: the layers the chosen kernel does not (a GEMM kernel's depthwise ones).
constexpr const char* kFallback = "cuda.22_int8_direct";

int narrow(std::int64_t v) { return static_cast<int>(v); }
}  // namespace

GpuInt8NetworkPlan::GpuInt8NetworkPlan(const QuantizedNetwork& q, std::int64_t batch, const std::string& kernel_id,
                                       gpu::GpuRuntime& rt)
    : q_(q), batch_(batch), rt_(rt) {
  const gpu::Int8ConvKernel& chosen = rt.int8_conv_kernel(kernel_id);  // throws for anything else
  const Network& net = q.network();
  const auto& layers = net.layers();
  Shape in = net.input_item(), out = net.output_item();
  in.dims[0] = out.dims[0] = batch;
  host_input_ = Tensor(in);
  host_output_ = Tensor(out);
  input_ = gpu::DeviceBuffer(rt, static_cast<std::size_t>(host_input_.elems()));
  quantized_input_ = gpu::DeviceBuffer::of_bytes(rt, static_cast<std::size_t>(host_input_.elems()));
  output_ = gpu::DeviceBuffer(rt, static_cast<std::size_t>(host_output_.elems()));
  if (layers.back().kind == LayerKind::softmax) logits_ = gpu::DeviceBuffer(rt, static_cast<std::size_t>(host_output_.elems()));
  memory_.activations_bytes = input_.bytes() + quantized_input_.bytes() + output_.bytes() + logits_.bytes();
  convs_.resize(layers.size());
  kernel_ids_.resize(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const std::size_t elems = l.kind == LayerKind::softmax ? 0 : static_cast<std::size_t>(l.out_item.item_elems() * batch);
    activations_.push_back(gpu::DeviceBuffer::of_bytes(rt, elems));
    memory_.activations_bytes += activations_.back().bytes();
    if (!has_int8_weights(l)) continue;
    const ConvProblem p = int8_problem(net, l, batch);
    const std::string_view id = gpu::unsupported(chosen, p).empty() ? chosen.id : std::string_view(kFallback);
    const QuantizedWeights& w = q.weights(static_cast<int>(i));
    const Activation a = l.kind == LayerKind::conv ? l.epilogue.activation : l.relu ? Activation::relu : Activation::none;
    convs_[i].emplace(rt, id, p, Int8ConvWeights{w.weight, w.weight_scale, w.bias, q.activation(l.inputs[0]),
                                                 q.activation(static_cast<int>(i))},
                      Epilogue{a});
    kernel_ids_[i] = std::string(id);
    memory_.weights_bytes += convs_[i]->weight_bytes();
  }
}

unsigned char* GpuInt8NetworkPlan::bytes(int index) {
  gpu::DeviceBuffer& b = index == Network::kNetworkInput ? quantized_input_ : activations_.at(static_cast<std::size_t>(index));
  return reinterpret_cast<unsigned char*>(b.data());
}

void GpuInt8NetworkPlan::upload_input() { rt_.upload(input_.data(), host_input_.data(), host_input_.span().size()); }

void GpuInt8NetworkPlan::download_output() {
  rt_.download(host_output_.data(), output_.data(), host_output_.span().size());
}

void GpuInt8NetworkPlan::forward() { forward_timed({}); }

void GpuInt8NetworkPlan::forward_timed(std::span<double> layer_ms) {
  const auto& layers = q_.network().layers();
  if (!layer_ms.empty() && layer_ms.size() != layers.size())
    throw InputError(fmt::format("forward_timed: {} slots for {} layers", layer_ms.size(), layers.size()));
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = layer_ms.empty() ? Clock::time_point{} : Clock::now();  // forward() reads no clock
  rt_.quantize(input_.data(), bytes(Network::kNetworkInput), host_input_.elems(), q_.input().scale, q_.input().zero_point);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    run_layer(static_cast<int>(i));
    if (i + 1 == layers.size() && layers.back().kind != LayerKind::softmax) {
      const QuantParams o = q_.activation(static_cast<int>(i));
      rt_.dequantize(bytes(static_cast<int>(i)), output_.data(), host_output_.elems(), o.scale, o.zero_point);
    }
    if (layer_ms.empty()) continue;
    rt_.synchronize();
    const Clock::time_point end = Clock::now();
    layer_ms[i] = std::chrono::duration<double, std::milli>(end - start).count();
    start = end;
  }
}

void GpuInt8NetworkPlan::run_layer(int index) {
  const Network& net = q_.network();
  const Layer& l = net.layers().at(static_cast<std::size_t>(index));
  const int first = l.inputs[0];
  const Shape in = layer_input_item(net, l);
  const int planes = narrow(batch_ * in.c());
  unsigned char* out = bytes(index);
  switch (l.kind) {
    case LayerKind::conv:
    case LayerKind::linear: convs_[static_cast<std::size_t>(index)]->run(bytes(first), out); break;
    case LayerKind::max_pool:
    case LayerKind::avg_pool:
      rt_.pool_u8(gpu::PoolArgsU8{.in = bytes(first), .out = out, .planes = planes, .h = narrow(in.h()), .w = narrow(in.w()),
                                  .oh = narrow(l.out_item.h()), .ow = narrow(l.out_item.w()), .kernel = narrow(l.pool.kernel),
                                  .stride = narrow(l.pool.stride), .pad = narrow(l.pool.pad),
                                  .zero_point = q_.activation(index).zero_point},
                  l.kind == LayerKind::avg_pool);
      break;
    case LayerKind::global_avg_pool: rt_.global_avg_pool_u8(bytes(first), planes, narrow(in.h() * in.w()), out); break;
    case LayerKind::add: {
      const QuantParams qa = q_.activation(first), qb = q_.activation(l.inputs[1]), qo = q_.activation(index);
      rt_.add_u8(gpu::AddArgsU8{.a = bytes(first), .b = bytes(l.inputs[1]), .out = out,
                                .count = static_cast<long long>(l.out_item.item_elems() * batch_),
                                .a_scale = qa.scale / qo.scale, .b_scale = qb.scale / qo.scale,
                                .a_zero_point = qa.zero_point, .b_zero_point = qb.zero_point,
                                .out_zero_point = qo.zero_point, .lo = l.relu ? qo.zero_point : 0});
      break;
    }
    case LayerKind::softmax: {  // the last layer: FP32, on the dequantised logits
      const QuantParams x = q_.activation(first);
      rt_.dequantize(bytes(first), logits_.data(), host_output_.elems(), x.scale, x.zero_point);
      rt_.softmax(logits_.data(), narrow(batch_), narrow(l.out_item.c()), output_.data());
      break;
    }
  }
}

std::size_t GpuInt8NetworkPlan::size(int index) const {
  const std::int64_t item = index == Network::kNetworkInput
                                ? q_.network().input_item().item_elems()
                                : q_.network().layers().at(static_cast<std::size_t>(index)).out_item.item_elems();
  return static_cast<std::size_t>(item * batch_);
}

std::vector<std::uint8_t> GpuInt8NetworkPlan::activation_bytes(int index) {
  std::vector<std::uint8_t> host(size(index));
  rt_.download_bytes(host.data(), bytes(index), host.size());
  return host;
}

void GpuInt8NetworkPlan::set_activation_bytes(int index, std::span<const std::uint8_t> values) {
  const std::size_t size = this->size(index);
  if (values.size() != size)
    throw InputError(fmt::format("set_activation_bytes: {} bytes for a buffer of {}", values.size(), size));
  rt_.upload_bytes(bytes(index), values.data(), size);
}

std::vector<float> GpuInt8NetworkPlan::dequantized(int layer) {
  if (q_.network().layers().at(static_cast<std::size_t>(layer)).kind == LayerKind::softmax) {
    download_output();
    rt_.synchronize();
    return {host_output_.data(), host_output_.data() + host_output_.elems()};
  }
  const std::vector<std::uint8_t> q = activation_bytes(layer);
  std::vector<float> out(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) out[i] = dequantize(q[i], q_.activation(layer));
  return out;
}

}  // namespace convlab
