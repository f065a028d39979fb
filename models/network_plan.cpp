// The executor: a Network planned for one batch size with one kernel per conv layer (NetworkPlan,
// models/network.hpp). Apart from network.cpp, which only builds the graph, so that what reads a
// network (the weight and int8 file loaders, and their fuzz targets) needs no kernel.
#include <algorithm>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/timing_memory.hpp"
#include "models/network.hpp"

namespace convlab {

const std::string& KernelSelection::for_layer(const std::string& layer) const {
  const auto it = per_layer.find(layer);
  return it == per_layer.end() ? default_kernel : it->second;
}

std::string unsupported_reason(const Layer& layer, std::int64_t batch, const std::string& kernel_id) {
  const KernelInfo* info = find_kernel(kernel_id);
  if (info == nullptr) return fmt::format("unknown kernel '{}' for layer {}", kernel_id, layer.name);
  const ConvProblem p = layer.conv.with_batch(batch);
  if (std::string why = info->unsupported(p); !why.empty())
    return fmt::format("{} does not support {} ({}): {}", kernel_id, layer.name, to_string(p), why);
  return {};
}

std::string unsupported_reason(const Network& net, const std::string& kernel_id) {
  for (const Layer& l : net.layers()) {
    if (l.kind != LayerKind::conv) continue;
    if (std::string why = unsupported_reason(l, 1, kernel_id); !why.empty()) return why;
  }
  return {};
}

NetworkPlan::NetworkPlan(const Network& net, std::int64_t batch, const KernelSelection& kernels)
    : LayerWalk(net, batch) {
  const ReuseTimingMemory reuse;  // the layers' plan-time timing, one set of pages (timing_memory.hpp)
  input_ = Tensor(batched(net.input_item()));
  memory_.activations_bytes += input_.bytes();
  std::size_t workspace = 0;
  for (const Layer& l : net.layers()) {
    activations_.emplace_back(batched(l.out_item));
    memory_.activations_bytes += activations_.back().bytes();
    kernel_ids_.emplace_back();
    convs_.emplace_back();
    if (l.kind == LayerKind::conv) {
      const std::string& id = kernels.for_layer(l.name);
      if (std::string why = unsupported_reason(l, batch, id); !why.empty()) throw InputError(why);
      convs_.back() = find_kernel(id)->plan(l.conv.with_batch(batch), ConvWeights{l.weight, l.bias}, l.epilogue);
      const std::string chosen = convs_.back()->chosen_kernel();
      kernel_ids_.back() = chosen.empty() ? id : chosen;
      workspace = std::max(workspace, convs_.back()->workspace_bytes());
      memory_.weights_bytes += convs_.back()->weight_bytes();
    } else {
      memory_.weights_bytes += (l.weight.size() + l.bias.size()) * sizeof(float);
    }
  }
  workspace_ = aligned_floats((workspace + sizeof(float) - 1) / sizeof(float));
  memory_.workspace_bytes = workspace;
}

bool NetworkPlan::effective_flops() const {
  for (const auto& conv : convs_)
    if (conv && conv->effective_flops()) return true;
  return false;
}

bool NetworkPlan::has_layout_changes() const {
  for (const auto& conv : convs_)
    if (conv && conv->changes_layout()) return true;
  return false;
}

void NetworkPlan::layout_changes_only() {
  for (std::size_t i = 0; i < convs_.size(); ++i)
    if (convs_[i] && convs_[i]->changes_layout())
      convs_[i]->run_layout_changes_only(buffer(net_.layers()[i].inputs[0]), activations_[i].data(), workspace_.get());
}

float* NetworkPlan::buffer(int index) {
  return index == Network::kNetworkInput ? input_.data() : activations_[static_cast<std::size_t>(index)].data();
}

void NetworkPlan::run_layer(std::size_t i, const Operands& x) {
  const Layer& l = net_.layers()[i];
  switch (l.kind) {
    case LayerKind::conv: convs_[i]->run(x.in, x.out, workspace_.get()); break;
    case LayerKind::max_pool: ops::max_pool2d(x.in, x.in_shape, x.out, l.pool); break;
    case LayerKind::avg_pool: ops::avg_pool2d(x.in, x.in_shape, x.out, l.pool); break;
    case LayerKind::global_avg_pool: ops::global_avg_pool(x.in, x.in_shape, x.out); break;
    case LayerKind::linear:
      ops::linear(x.in, batch_, x.in_shape.item_elems(), l.weight.data(), l.bias.data(), l.out_item.c(), x.out, l.relu);
      break;
    case LayerKind::add: ops::add(x.in, x.second, x.out, activations_[i].elems(), l.relu); break;
    case LayerKind::softmax: ops::softmax(x.in, batch_, l.out_item.c(), x.out); break;
  }
}

}  // namespace convlab
