#include "bench/check/validate.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "models/gpu_network.hpp"

namespace convlab {

namespace {
std::int64_t elems_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

bool all_finite(std::span<const float> x) {
  return std::ranges::all_of(x, [](float v) { return std::isfinite(v); });
}

std::int64_t argmax(std::span<const float> row) {
  return std::max_element(row.begin(), row.end()) - row.begin();
}

const StoredTensor& float_tensor(const TensorFile& file, const std::string& name, const std::string& what) {
  const auto it = file.tensors.find(name);
  if (it == file.tensors.end()) throw InputError(fmt::format("{} has no tensor '{}'", what, name));
  if (!it->second.is_float())
    throw InputError(fmt::format("{}: tensor '{}' has dtype {} (need F32, F16 or F64)", what, name, it->second.dtype));
  return it->second;
}
}  // namespace

std::vector<std::string> kernels_covering(const Network& net, Backend backend) {
  std::vector<std::string> ids;
  for (const KernelInfo& k : all_kernels()) {
    if (k.backend != backend) continue;
    for (const Layer& l : net.layers())
      if (l.kind == LayerKind::conv && k.supports(l.conv)) {
        ids.emplace_back(k.id);
        break;
      }
  }
  return ids;
}

LayerComparison compare_layer(const std::string& layer, std::span<const float> got, std::span<const float> expect,
                              const Tolerance& tolerance) {
  LayerComparison c{.layer = layer, .elems = static_cast<std::int64_t>(expect.size())};
  double diff2 = 0, ref2 = 0;
  bool finite = got.size() == expect.size();
  for (std::size_t i = 0; i < expect.size() && finite; ++i) c.peak = std::max(c.peak, std::abs(double(expect[i])));
  for (std::size_t i = 0; i < expect.size() && finite; ++i) {
    const double d = std::abs(double(got[i]) - double(expect[i])), ref = std::abs(double(expect[i]));
    finite = std::isfinite(got[i]);
    c.max_abs = std::max(c.max_abs, d);
    if (ref >= kRelativeErrorFloor * c.peak && ref > 0) c.max_rel = std::max(c.max_rel, d / ref);
    diff2 += d * d;
    ref2 += ref * ref;
  }
  c.normalised = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.pass = finite && c.normalised <= tolerance.normalised && c.max_abs <= tolerance.peak_fraction * c.peak;
  return c;
}

void check_reference(const Network& net, const TensorFile& input, const TensorFile& expect) {
  const StoredTensor& x = float_tensor(input, "input", fmt::format("the input file '{}'", input.path));
  const Shape item = net.input_item();
  if (x.shape.size() != 4 || x.shape[0] < 1 || x.shape[1] != item.c() || x.shape[2] != item.h() ||
      x.shape[3] != item.w())
    throw InputError(fmt::format("the input file '{}': tensor 'input' has shape {}, {} needs N x {} x {} x {}",
                                 input.path, nlohmann::json(x.shape).dump(), net.name(), item.c(), item.h(), item.w()));
  const std::int64_t batch = x.shape[0];
  float_tensor(expect, "output", fmt::format("the expect file '{}'", expect.path));
  for (const auto& [name, t] : expect.tensors) {
    const auto& layers = net.layers();
    const auto it = std::ranges::find(layers, name, &Layer::name);  // (clang 14 lambdas cannot capture name)
    if (name != "output" && it == layers.end())
      throw InputError(fmt::format("expect tensor '{}' is not a layer of {}", name, net.name()));
    const std::int64_t want = batch * (name == "output" ? net.output_item() : it->out_item).item_elems();
    if (!t.is_float() || elems_of(t.shape) != want || t.shape.empty() || t.shape[0] != batch)
      throw InputError(fmt::format("expect tensor '{}' ({} {}) does not match the layer: {} floats in a batch of {}",
                                   name, t.dtype, nlohmann::json(t.shape).dump(), want, batch));
  }
}

KernelValidation validate_kernel(const Network& net, const StoredTensor& input, const TensorFile& expect,
                                 const std::string& kernel_id, gpu::GpuRuntime* gpu) {
  const KernelInfo* info = find_kernel(kernel_id);
  if (info == nullptr) throw InputError(fmt::format("unknown kernel '{}'", kernel_id));
  const bool on_gpu = info->backend != Backend::cpu;
  if (on_gpu && gpu == nullptr)
    throw InputError(fmt::format("{} needs a {} runtime (device or emulator)", kernel_id, to_string(info->backend)));
  KernelValidation v{.kernel = kernel_id, .tolerance = tolerance_for(info->error_scale)};
  const std::int64_t batch = input.shape.at(0);
  // The layers the kernel does not support run the backend's plainest kernel.
  KernelSelection selection{.default_kernel = fmt::format("{}.00_{}", to_string(info->backend),
                                                          on_gpu ? "naive" : "reference")};
  for (const Layer& l : net.layers()) {
    if (l.kind != LayerKind::conv) continue;
    ++v.conv_layers;
    if (info->supports(l.conv.with_batch(batch))) {
      selection.per_layer[l.name] = kernel_id;
      ++v.conv_layers_run;
    }
  }
  if (v.conv_layers_run == 0)
    throw InputError(fmt::format("{} supports no conv layer of {} at batch {}", kernel_id, net.name(), batch));

  const auto& layers = net.layers();
  std::vector<std::optional<Tensor>> outputs(layers.size());  // every stored layer's output, on the host
  Tensor logits_got;
  if (on_gpu) {
    GpuNetworkPlan plan(net, batch, selection, *gpu);
    std::copy(input.values.begin(), input.values.end(), plan.input().data());
    plan.upload_input();
    plan.forward();
    plan.download_output();
    gpu->synchronize();
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (plan.materialised(static_cast<int>(i))) outputs[i] = plan.download_activation(static_cast<int>(i));
    logits_got = Tensor(plan.output().shape());
    std::ranges::copy(plan.output().span(), logits_got.data());
  }
  std::optional<NetworkPlan> cpu;
  if (!on_gpu) {
    cpu.emplace(net, batch, selection);
    std::copy(input.values.begin(), input.values.end(), cpu->input().data());
    cpu->forward();
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const Tensor& a = cpu->activation(static_cast<int>(i));
      outputs[i] = Tensor(a.shape());
      std::ranges::copy(a.span(), outputs[i]->data());
    }
    logits_got = Tensor(cpu->output().shape());
    std::ranges::copy(cpu->output().span(), logits_got.data());
  }
  const auto tap = [&expect, &layers](int index) -> const std::vector<float>* {
    const auto it = expect.tensors.find(layers[static_cast<std::size_t>(index)].name);
    return it == expect.tensors.end() ? nullptr : &it->second.values;
  };
  bool last_own = false;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::vector<float>* want = tap(static_cast<int>(i));
    if (want == nullptr) continue;
    if (!outputs[i]) {
      v.not_stored.push_back(layers[i].name);
      continue;
    }
    const LayerComparison chained = compare_layer(layers[i].name, outputs[i]->span(), *want, v.tolerance);
    const bool has_inputs = std::ranges::all_of(layers[i].inputs, [&](int in) {
      return in == Network::kNetworkInput || tap(in) != nullptr;
    });
    LayerComparison c = chained;
    if (cpu && has_inputs) {  // the layer alone, on the reference's inputs
      for (const int in : layers[i].inputs) {
        const std::span<const float> from = in == Network::kNetworkInput ? std::span<const float>(input.values) : *tap(in);
        Tensor& to = in == Network::kNetworkInput ? cpu->input() : cpu->activation(in);
        std::ranges::copy(from, to.data());
      }
      cpu->forward_layer(i);
      c = compare_layer(layers[i].name, cpu->activation(static_cast<int>(i)).span(), *want, v.tolerance);
      c.own_inputs = true;
      c.pass = c.pass && all_finite(outputs[i]->span());  // the whole run must stay finite too
    }
    c.chained_normalised = chained.normalised;
    last_own = i + 1 == layers.size() && c.own_inputs;
    v.layers.push_back(c);
  }
  const std::vector<float>& logits = expect.tensors.at("output").values;
  // A last layer named "output" (an ONNX graph's) already stands for the logits: no second row.
  if (v.layers.empty() || v.layers.back().layer != "output" || layers.back().name != "output") {
    LayerComparison out = compare_layer("output", logits_got.span(), logits, v.tolerance);
    out.chained_normalised = out.normalised;
    if (last_own) {  // the last layer was judged on its own inputs; the logits' run is judged by top-1
      out.judged = false;
      out.pass = all_finite(logits_got.span());
    }
    v.layers.push_back(out);
  }
  judge_top1(v, logits_got.span(), logits, batch, 2 * v.tolerance.peak_fraction * v.layers.back().peak);
  return v;
}

void judge_top1(KernelValidation& v, std::span<const float> got_logits, std::span<const float> want_logits,
                std::int64_t batch, double near_tie) {
  const std::size_t classes = want_logits.size() / static_cast<std::size_t>(batch);
  v.items = batch;
  for (std::int64_t n = 0; n < batch; ++n) {
    const auto want = want_logits.subspan(n * classes, classes), got = got_logits.subspan(n * classes, classes);
    const std::int64_t best = argmax(want);
    if (argmax(got) == best) {
      ++v.top1_agree;
      continue;
    }
    float runner_up = -INFINITY;  // the reference's margin decides whether a flip is a near tie
    for (std::size_t k = 0; k < classes; ++k)
      if (static_cast<std::int64_t>(k) != best) runner_up = std::max(runner_up, want[k]);
    if (want[best] - runner_up > near_tie) v.top1_ok = false;
  }
  for (const LayerComparison& c : v.layers)
    if (!c.pass && v.first_divergent.empty()) v.first_divergent = c.layer;
  v.pass = v.first_divergent.empty() && v.top1_ok;
}

std::string describe(const KernelValidation& v) {
  const bool int8 = v.tolerance.quanta > 0;
  std::string s = int8 ? fmt::format("{}: {}  (tolerance, each layer on the reference's inputs: max {} quantum of its "
                                     "output scale, on at most {:.0f}% of the elements or one)\n",
                                     v.kernel, v.pass ? "PASS" : "FAIL", v.tolerance.quanta, 100 * v.tolerance.off_share)
                       : fmt::format("{}: {}  (tolerance: normalised error <= {:.2g}, max abs <= {:.2g} x layer peak)\n",
                                     v.kernel, v.pass ? "PASS" : "FAIL", v.tolerance.normalised, v.tolerance.peak_fraction);
  if (v.conv_layers_run < v.conv_layers)
    s += fmt::format("  ran {} of the {} conv layers; the backend's plainest kernel ran the others\n", v.conv_layers_run,
                     v.conv_layers);
  for (const std::string& layer : v.not_stored)
    s += fmt::format("  {}: fused into the layer after it, compared there\n", layer);
  if (int8) {
    s += "  own: the layer run on the reference's own input bytes (judged); chained: the whole network run from\n"
         "  the input, where one-quantum differences feed the next layers (reported)\n";
    s += fmt::format("  {:<24} {:>8} {:>10} {:>10} {:>9} {:>10} {:>9}  {}\n", "layer", "elems", "scale", "own quanta",
                     "own off", "chain qnt", "chain off", "result");
    for (const LayerComparison& c : v.layers) {
      const std::string own = c.judged ? fmt::format("{:>10.0f} {:>8.2f}%", c.max_quanta, 100 * c.off_share)
                                       : fmt::format("{:>10} {:>9}", "-", "-");
      const char* result = c.judged ? (c.pass ? "ok" : "FAIL") : (c.pass ? "(not judged)" : "FAIL (not finite)");
      s += fmt::format("  {:<24} {:>8} {:>10.3e} {} {:>10.0f} {:>8.2f}%  {}\n", c.layer, c.elems, c.scale, own,
                       c.chained_quanta, 100 * c.chained_off_share, result);
    }
  } else {
    if (std::ranges::any_of(v.layers, &LayerComparison::own_inputs))
      s += "  each layer run on the reference's own inputs (judged); chained: the normalised error through the\n"
           "  whole network from the input, where each layer's rounding feeds the next (reported; the logits'\n"
           "  top-1 judged). A layer marked * has inputs the expect file lacks: judged on the chained run\n";
    s += fmt::format("  {:<24} {:>8} {:>11} {:>11} {:>11} {:>11} {:>11}  {}\n", "layer", "elems", "max abs", "max rel",
                     "normalised", "chained", "peak", "result");
    for (const LayerComparison& c : v.layers) {
      const char* result = !c.judged ? (c.pass ? "(not judged)" : "FAIL (not finite)") : c.pass ? "ok" : "FAIL";
      const bool starred = c.judged && !c.own_inputs && std::ranges::any_of(v.layers, &LayerComparison::own_inputs);
      s += fmt::format("  {:<24} {:>8} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e} {:>11.3e}  {}{}\n", c.layer, c.elems,
                       c.max_abs, c.max_rel, c.normalised, c.chained_normalised, c.peak, result, starred ? " *" : "");
    }
  }
  s += fmt::format("  top-1 agreement {}/{}{}", v.top1_agree, v.items, v.top1_ok ? "" : " (a clear prediction flipped)");
  if (!v.first_divergent.empty()) s += fmt::format("; first diverging layer: {}", v.first_divergent);
  return s + "\n";
}

nlohmann::json to_json(const KernelValidation& v) {
  nlohmann::json layers = nlohmann::json::array();
  const bool int8 = v.tolerance.quanta > 0;
  for (const LayerComparison& c : v.layers) {
    layers.push_back({{"layer", c.layer}, {"elems", c.elems}, {"max_abs_error", c.max_abs}, {"max_rel_error", c.max_rel},
                      {"normalised_error", c.normalised}, {"peak", c.peak}, {"pass", c.pass}, {"judged", c.judged}});
    if (!int8)
      layers.back().update({{"on_reference_inputs", c.own_inputs}, {"chained_normalised_error", c.chained_normalised}});
    if (int8)
      layers.back().update({{"scale", c.scale}, {"max_quanta", c.max_quanta}, {"off_share", c.off_share},
                            {"chained_max_quanta", c.chained_quanta}, {"chained_off_share", c.chained_off_share}});
  }
  const nlohmann::json tolerance = int8 ? nlohmann::json{{"max_quanta", v.tolerance.quanta},
                                                         {"off_share", v.tolerance.off_share}}
                                        : nlohmann::json{{"normalised_error", v.tolerance.normalised},
                                                         {"max_abs_over_peak", v.tolerance.peak_fraction}};
  return {{"kernel", v.kernel}, {"pass", v.pass}, {"conv_layers", v.conv_layers}, {"conv_layers_run", v.conv_layers_run},
          {"tolerance", tolerance},
          {"first_divergent_layer", v.first_divergent.empty() ? nlohmann::json() : nlohmann::json(v.first_divergent)},
          {"top1_agree", v.top1_agree}, {"items", v.items}, {"top1_ok", v.top1_ok}, {"layers", layers},
          {"fused_not_stored", v.not_stored}};
}

}  // namespace convlab
