#include "bench/check/quantization_effect.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace convlab {

namespace {

double sqnr_db(std::span<const float> reference, std::span<const float> quantized) {
  double signal = 0, noise = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double d = static_cast<double>(quantized[i]) - reference[i];
    signal += static_cast<double>(reference[i]) * reference[i];
    noise += d * d;
  }
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10 * std::log10(signal / noise);
}

}  // namespace

std::vector<float> seeded_inputs(const Network& net, std::int64_t count, std::uint64_t seed, std::uint64_t stream) {
  const auto item = static_cast<std::size_t>(net.input_item().elems());
  std::vector<float> v(item * static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    fill_uniform(std::span(v).subspan(static_cast<std::size_t>(i) * item, item), seed, stream + static_cast<std::uint64_t>(i));
  return v;
}

QuantizationEffect measure_quantization_effect(const QuantizedNetwork& q, std::span<const float> inputs,
                                               const std::string& int8_kernel) {
  const Network& net = q.network();
  const std::int64_t batch = static_cast<std::int64_t>(inputs.size()) / net.input_item().elems();
  NetworkPlan fp32(net, batch, KernelSelection{"cpu.01_im2col_eigen", {}});
  Int8NetworkPlan int8(q, batch, int8_kernel);
  std::ranges::copy(inputs, fp32.input().data());
  std::ranges::copy(inputs, int8.input().data());
  fp32.forward();
  int8.forward();

  QuantizationEffect e{.source = q.source(), .fp32_parameter_bytes = static_cast<std::size_t>(net.parameter_count()) * sizeof(float),
                       .int8_parameter_bytes = q.parameter_bytes(), .inputs = batch};
  const std::span<const float> ref = fp32.output().span(), got = int8.output().span();
  const std::size_t classes = ref.size() / static_cast<std::size_t>(batch);
  for (std::int64_t n = 0; n < batch; ++n) {
    const auto r = ref.subspan(static_cast<std::size_t>(n) * classes, classes);
    const auto g = got.subspan(static_cast<std::size_t>(n) * classes, classes);
    e.top1_agreements += std::ranges::max_element(r) - r.begin() == std::ranges::max_element(g) - g.begin();
  }
  e.logits_normalised_error = std::pow(10.0, -sqnr_db(ref, got) / 20);
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const Layer& l = net.layers()[i];
    if (l.kind != LayerKind::conv && l.kind != LayerKind::linear && l.kind != LayerKind::add) continue;
    e.layers.push_back({l.name, sqnr_db(fp32.activation(static_cast<int>(i)).span(), int8.dequantized(static_cast<int>(i)))});
  }
  return e;
}

std::string describe(const QuantizationEffect& e) {
  std::string out = fmt::format(
      "int8 vs fp32: parameters {:.1f} KiB -> {:.1f} KiB ({:.2f}x smaller); top-1 agreement {} of {} inputs ({:.1f}%); "
      "logits' normalised error {:.3f}\n",
      e.fp32_parameter_bytes / 1024.0, e.int8_parameter_bytes / 1024.0,
      static_cast<double>(e.fp32_parameter_bytes) / static_cast<double>(e.int8_parameter_bytes), e.top1_agreements,
      e.inputs, 100.0 * static_cast<double>(e.top1_agreements) / static_cast<double>(e.inputs), e.logits_normalised_error);
  out += fmt::format("  quantisation: {}\n  SQNR per layer (dB; under {:.0f} flagged LOW):", e.source, kLowSqnrDb);
  for (const auto& l : e.layers) out += fmt::format(" {} {:.1f}{}", l.layer, l.db, l.db < kLowSqnrDb ? " LOW" : "");
  return out + "\n";
}

nlohmann::json to_json(const QuantizationEffect& e) {
  nlohmann::json layers = nlohmann::json::object();
  for (const auto& l : e.layers) layers[l.layer] = std::isfinite(l.db) ? nlohmann::json(l.db) : nlohmann::json(nullptr);
  return {{"source", e.source},
          {"fp32_parameter_bytes", e.fp32_parameter_bytes},
          {"int8_parameter_bytes", e.int8_parameter_bytes},
          {"eval_inputs", e.inputs},
          {"top1_agreements", e.top1_agreements},
          {"logits_normalised_error", e.logits_normalised_error},
          {"layer_sqnr_db", layers},
          {"low_sqnr_db", kLowSqnrDb}};
}

}  // namespace convlab
