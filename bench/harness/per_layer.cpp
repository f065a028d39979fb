#include "bench/harness/per_layer.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "bench/harness/stats.hpp"

namespace convlab {

namespace {

template <class Plan>
std::vector<LayerTime> profile(Plan& plan, const Network& net, const Protocol& protocol, int element_bytes) {
  const std::vector<std::string>& kernels = plan.kernel_ids();
  const std::size_t count = net.layers().size();
  std::vector<double> one(count);
  for (int i = 0; i < protocol.warmup; ++i) plan.forward_timed(one);
  std::vector<std::vector<double>> samples(count, std::vector<double>(static_cast<std::size_t>(protocol.trials)));
  for (int t = 0; t < protocol.trials; ++t) {
    plan.forward_timed(one);
    for (std::size_t i = 0; i < count; ++i) samples[i][static_cast<std::size_t>(t)] = one[i];
  }
  std::vector<LayerTime> times;
  double total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const Layer& l = net.layers()[i];
    const Network::Work work = net.layer_work(i, plan.batch(), element_bytes);
    times.push_back({.layer = l.name, .kind = l.kind, .kernel = kernels.at(i), .median_ms = summarize(samples[i]).p50,
                     .flops = work.flops, .bytes = work.bytes});
    total += times.back().median_ms;
  }
  for (LayerTime& t : times) t.share = total > 0 ? t.median_ms / total : 0;
  return times;
}

}  // namespace

std::vector<LayerTime> profile_layers(NetworkPlan& plan, const Network& net, const Protocol& protocol) {
  return profile(plan, net, protocol, sizeof(float));
}
std::vector<LayerTime> profile_layers(GpuNetworkPlan& plan, const Network& net, const Protocol& protocol) {
  return profile(plan, net, protocol, sizeof(float));
}
std::vector<LayerTime> profile_layers(Int8NetworkPlan& plan, const Network& net, const Protocol& protocol) {
  return profile(plan, net, protocol, sizeof(std::int8_t));
}
std::vector<LayerTime> profile_layers(GpuInt8NetworkPlan& plan, const Network& net, const Protocol& protocol) {
  return profile(plan, net, protocol, sizeof(std::int8_t));
}

std::optional<RooflinePoint> roofline_point(const LayerTime& t, double compute_gflops, double read_gbs) {
  if (t.flops <= 0 || t.bytes <= 0 || t.median_ms <= 0 || compute_gflops <= 0 || read_gbs <= 0) return std::nullopt;
  const double memory = read_gbs * t.intensity();  // GB/s x FLOP/B = GFLOP/s
  RooflinePoint p{.roof_gflops = std::min(compute_gflops, memory), .memory_bound = memory < compute_gflops};
  p.percent_of_roof = 100 * t.gflops() / p.roof_gflops;
  return p;
}

std::string describe(const std::vector<LayerTime>& times) {
  std::string s = fmt::format("  {:<24} {:<16} {:>10} {:>7} {:>9} {:>7}  {}\n", "layer", "kind", "p50 ms", "share",
                              "GFLOP/s", "FLOP/B", "");
  for (const LayerTime& t : times)
    s += fmt::format("  {:<24} {:<16} {:>10.4f} {:>6.1f}% {:>9} {:>7}  {}\n", t.layer, to_string(t.kind), t.median_ms,
                     100 * t.share, t.flops > 0 ? fmt::format("{:.1f}", t.gflops()) : "-",
                     t.flops > 0 ? fmt::format("{:.1f}", t.intensity()) : "-",
                     std::string(static_cast<std::size_t>(t.share * 40 + 0.5), '#'));
  return s;
}

}  // namespace convlab
