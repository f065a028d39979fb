#include "models/gpu_network.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

namespace {
// Conv i feeds layer i + 1 and no other layer, so the conv may write layer i + 1's output in its
// own place.
bool feeds_only_next(const Network& net, std::size_t i) {
  const auto& layers = net.layers();
  if (layers[i].kind != LayerKind::conv || i + 1 >= layers.size()) return false;
  const auto& next_inputs = layers[i + 1].inputs;
  if (std::find(next_inputs.begin(), next_inputs.end(), static_cast<int>(i)) == next_inputs.end()) return false;
  for (std::size_t j = 0; j < layers.size(); ++j)
    for (int input : layers[j].inputs)
      if (input == static_cast<int>(i) && j != i + 1) return false;
  return true;
}

// Conv i can be fused with an add after it when the add sums conv i and another branch and the
// conv has no activation of its own (the add's ReLU comes after the sum).
bool fuses_add(const Network& net, std::size_t i) {
  if (!feeds_only_next(net, i)) return false;
  const Layer& next = net.layers()[i + 1];
  if (next.kind != LayerKind::add || net.layers()[i].epilogue.activation != Activation::none) return false;
  return next.inputs[0] != next.inputs[1];
}

// The pooling of layer i + 1 as the conv's ConvArgs::pool (kind kPoolNone when it is not a pool
// of conv i alone).
gpu::FusedPool pool_after(const Network& net, std::size_t i) {
  if (!feeds_only_next(net, i)) return {};
  const Layer& next = net.layers()[i + 1];
  const auto narrow = [](std::int64_t v) { return static_cast<int>(v); };
  const int oh = narrow(next.out_item.h()), ow = narrow(next.out_item.w());
  switch (next.kind) {
    case LayerKind::max_pool:
    case LayerKind::avg_pool:
      return {.kind = next.kind == LayerKind::max_pool ? gpu::kPoolMax : gpu::kPoolAvg,
              .kernel = narrow(next.pool.kernel), .stride = narrow(next.pool.stride), .pad = narrow(next.pool.pad),
              .oh = oh, .ow = ow};
    case LayerKind::global_avg_pool: return {.kind = gpu::kPoolGlobalAvg, .oh = 1, .ow = 1};
    default: return {};
  }
}
}  // namespace

GpuNetworkPlan::GpuNetworkPlan(const Network& net, std::int64_t batch, const KernelSelection& kernels,
                               gpu::GpuRuntime& rt, bool fuse)
    : LayerWalk(net, batch), rt_(rt), host_input_(batched(net.input_item())), host_output_(batched(net.output_item())) {
  const auto& layers = net.layers();
  input_ = gpu::DeviceBuffer(rt, static_cast<std::size_t>(host_input_.elems()));
  memory_.activations_bytes += input_.bytes();
  activations_.resize(layers.size());
  convs_.resize(layers.size());
  linear_weights_.resize(layers.size());
  linear_biases_.resize(layers.size());
  fused_.assign(layers.size(), false);
  kernel_ids_.resize(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    if (l.kind == LayerKind::conv) {
      const ConvProblem p = l.conv.with_batch(batch);
      const std::string& kernel_id = kernels.for_layer(l.name);
      const gpu::ConvKernel& kernel = rt.conv_kernel(kernel_id, p);  // throws for another backend's id
      if (std::string why = unsupported_reason(l, batch, kernel_id); !why.empty()) throw InputError(why);
      const gpu::FusedPool pool = fuse && kernel.fuses_pool ? pool_after(net, i) : gpu::FusedPool{};
      fused_[i] = fuse && (fuses_add(net, i) || pool.kind != gpu::kPoolNone);
      Epilogue e = l.epilogue;
      if (fused_[i] && layers[i + 1].kind == LayerKind::add)
        e.activation = layers[i + 1].relu ? Activation::relu : Activation::none;
      convs_[i].emplace(rt, kernel_id, p, ConvWeights{l.weight, l.bias}, e, pool);
      kernel_ids_[i] = convs_[i]->kernel_id();
      memory_.weights_bytes += convs_[i]->weight_bytes();
      memory_.workspace_bytes += convs_[i]->workspace_bytes();  // each conv owns its own
    } else if (l.kind == LayerKind::linear) {
      linear_weights_[i] = gpu::DeviceBuffer(rt, l.weight.size());
      linear_biases_[i] = gpu::DeviceBuffer(rt, l.bias.size());
      rt.upload(linear_weights_[i].data(), l.weight.data(), l.weight.size());
      rt.upload(linear_biases_[i].data(), l.bias.data(), l.bias.size());
      memory_.weights_bytes += linear_weights_[i].bytes() + linear_biases_[i].bytes();
    }
    if (!fused_[i]) {
      activations_[i] = gpu::DeviceBuffer(rt, static_cast<std::size_t>(batched(l.out_item).elems()));
      memory_.activations_bytes += activations_[i].bytes();
    }
  }
  rt.synchronize();  // the uploads read the network's host vectors
}

float* GpuNetworkPlan::buffer(int index) {
  return index == Network::kNetworkInput ? input_.data() : activations_[static_cast<std::size_t>(index)].data();
}

void GpuNetworkPlan::upload_input() { rt_.upload(input_.data(), host_input_.data(), host_input_.span().size()); }

void GpuNetworkPlan::download_output() {
  rt_.download(host_output_.data(), activations_.back().data(), host_output_.span().size());
}

void GpuNetworkPlan::run_layer(std::size_t i, const Operands& x) {
  if (i > 0 && fused_[i - 1]) return;  // the conv before it already wrote this layer's output
  const Layer& l = net_.layers()[i];
  const auto narrow = [](std::int64_t v) { return static_cast<int>(v); };
  switch (l.kind) {
    case LayerKind::conv:
      if (fused_[i] && net_.layers()[i + 1].kind == LayerKind::add) {  // the add's other branch is the residual
        const auto& add_inputs = net_.layers()[i + 1].inputs;
        const int other = add_inputs[0] == static_cast<int>(i) ? add_inputs[1] : add_inputs[0];
        convs_[i]->run(x.in, buffer(static_cast<int>(i + 1)), buffer(other));
      } else if (fused_[i]) {  // the pool's output
        convs_[i]->run(x.in, buffer(static_cast<int>(i + 1)));
      } else {
        convs_[i]->run(x.in, x.out);
      }
      break;
    case LayerKind::max_pool:
    case LayerKind::avg_pool: {
      const Shape& in = x.in_shape;
      const Shape o = batched(l.out_item);
      rt_.pool(gpu::PoolArgs{.in = x.in, .out = x.out, .planes = narrow(in.n() * in.c()), .h = narrow(in.h()),
                             .w = narrow(in.w()), .oh = narrow(o.h()), .ow = narrow(o.w()),
                             .kernel = narrow(l.pool.kernel), .stride = narrow(l.pool.stride), .pad = narrow(l.pool.pad)},
               l.kind == LayerKind::avg_pool);
      break;
    }
    case LayerKind::global_avg_pool:
      rt_.global_avg_pool(x.in, narrow(x.in_shape.n() * x.in_shape.c()), narrow(x.in_shape.h() * x.in_shape.w()), x.out);
      break;
    case LayerKind::linear:
      rt_.linear(x.in, narrow(batch_), narrow(x.in_shape.item_elems()), linear_weights_[i].data(), linear_biases_[i].data(),
                 narrow(l.out_item.c()), x.out, l.relu);
      break;
    case LayerKind::add:
      rt_.add(x.in, x.second, x.out, static_cast<long long>(activations_[i].size()), l.relu);
      break;
    case LayerKind::softmax: rt_.softmax(x.in, narrow(batch_), narrow(l.out_item.c()), x.out); break;
  }
}

Tensor GpuNetworkPlan::download_activation(int layer) {
  const auto i = static_cast<std::size_t>(layer);
  if (fused_.at(i))
    throw InputError(fmt::format("layer {} is fused into the {} after it: its output is never stored",
                                 net_.layers()[i].name, to_string(net_.layers()[i + 1].kind)));
  Tensor t(batched(net_.layers()[i].out_item));
  rt_.download(t.data(), activations_[i].data(), t.span().size());
  rt_.synchronize();
  return t;
}

std::string GpuNetworkPlan::explain(int layer) const {
  const auto i = static_cast<std::size_t>(layer);
  if (!convs_.at(i)) return {};
  if (!fused_[i]) return std::string(convs_[i]->kernel_id());
  const LayerKind next = net_.layers()[i + 1].kind;
  return fmt::format("{} + {} fused", convs_[i]->kernel_id(), next == LayerKind::add ? "residual add" : to_string(next));
}

}  // namespace convlab
