#include "bench/harness/per_layer.hpp"

#include <fmt/format.h>

#include "bench/harness/stats.hpp"

namespace convlab {

namespace {

template <class Plan>
std::vector<LayerTime> profile(Plan& plan, const Network& net, const Protocol& protocol) {
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
    times.push_back({l.name, l.kind, kernels.at(i), summarize(samples[i]).p50});
    total += times.back().median_ms;
  }
  for (LayerTime& t : times) t.share = total > 0 ? t.median_ms / total : 0;
  return times;
}

}  // namespace

std::vector<LayerTime> profile_layers(NetworkPlan& plan, const Network& net, const Protocol& protocol) {
  return profile(plan, net, protocol);
}
std::vector<LayerTime> profile_layers(GpuNetworkPlan& plan, const Network& net, const Protocol& protocol) {
  return profile(plan, net, protocol);
}
std::vector<LayerTime> profile_layers(Int8NetworkPlan& plan, const Network& net, const Protocol& protocol) {
  return profile(plan, net, protocol);
}

std::string describe(const std::vector<LayerTime>& times) {
  std::string s = fmt::format("  {:<24} {:<16} {:>10} {:>7}  {}\n", "layer", "kind", "p50 ms", "share", "");
  for (const LayerTime& t : times)
    s += fmt::format("  {:<24} {:<16} {:>10.4f} {:>6.1f}%  {}\n", t.layer, to_string(t.kind), t.median_ms,
                     100 * t.share, std::string(static_cast<std::size_t>(t.share * 40 + 0.5), '#'));
  return s;
}

}  // namespace convlab
