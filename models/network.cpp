#include "models/network.hpp"

#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "models/batchnorm.hpp"

namespace convlab {

namespace {

// splitmix64: tiny, fast, and the same on every platform (std's distributions are not).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }  // [0, 1)
  float normal() {  // Box-Muller; 1 - u keeps the logarithm finite
    const double u1 = 1.0 - static_cast<double>(next() >> 11) * 0x1.0p-53, u2 = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
  }
};

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

std::string_view to_string(LayerKind kind) {
  switch (kind) {
    case LayerKind::conv: return "conv";
    case LayerKind::max_pool: return "max_pool";
    case LayerKind::avg_pool: return "avg_pool";
    case LayerKind::global_avg_pool: return "global_avg_pool";
    case LayerKind::linear: return "linear";
    case LayerKind::add: return "add";
    case LayerKind::softmax: return "softmax";
  }
  return "?";
}

void fill_uniform(std::span<float> out, std::uint64_t seed, std::uint64_t stream) {
  SplitMix64 rng{seed * 0x9E3779B97F4A7C15ull ^ stream};
  for (float& v : out) v = 2.0f * rng.uniform() - 1.0f;
}

WeightSource seeded_weights(std::uint64_t seed) {
  return [seed](const std::string& name, const std::vector<std::int64_t>& shape, std::int64_t fan_in) {
    std::int64_t count = 1;
    for (std::int64_t d : shape) count *= d;
    std::vector<float> values(static_cast<std::size_t>(count));
    SplitMix64 rng{seed * 0x9E3779B97F4A7C15ull ^ fnv1a(name)};
    auto uniform = [&](float lo, float hi) {
      for (float& v : values) v = lo + (hi - lo) * rng.uniform();
    };
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    if (ends_with(name, ".running_mean")) uniform(-0.5f, 0.5f);
    else if (ends_with(name, ".running_var")) uniform(0.5f, 2.0f);
    else if (ends_with(name, ".bias")) uniform(-bound, bound);
    else if (shape.size() == 1) uniform(0.5f, 1.5f);  // a BatchNorm weight (gamma)
    else {
      const float std_dev = std::sqrt(2.0f / static_cast<float>(fan_in));  // He-normal
      for (float& v : values) v = std_dev * rng.normal();
    }
    return values;
  };
}

Network::Network(std::string name, Shape input_item, WeightSource weights)
    : name_(std::move(name)), input_item_(input_item), weights_(std::move(weights)) {}

Shape Network::item_shape(int input) const {
  if (input == kNetworkInput) return input_item_;
  if (input < 0 || input >= static_cast<int>(layers_.size()))
    throw InputError(fmt::format("{}: layer input {} does not exist", name_, input));
  return layers_[input].out_item;
}

int Network::push(Layer layer) {
  layers_.push_back(std::move(layer));
  return static_cast<int>(layers_.size()) - 1;
}

int Network::conv(const std::string& name, int input, std::int64_t out_channels, std::int64_t kernel,
                  std::int64_t stride, std::int64_t pad, std::int64_t groups, bool bias, Activation activation) {
  return conv(name, input,
              ConvProblem{.k = out_channels, .r = kernel, .s = kernel, .stride_h = stride, .stride_w = stride,
                          .pad_h = pad, .pad_w = pad, .groups = groups},
              bias, activation);
}

int Network::conv(const std::string& name, int input, const ConvProblem& geometry, bool bias, Activation activation) {
  const Shape in = item_shape(input);
  Layer l{.name = name, .kind = LayerKind::conv, .inputs = {input}};
  l.conv = geometry;
  l.conv.n = 1, l.conv.c = in.c(), l.conv.h = in.h(), l.conv.w = in.w();
  l.conv.name = name_ + ":" + name;
  l.conv.validate();
  l.epilogue.activation = activation;
  l.out_item = nchw(1, l.conv.k, l.conv.out_h(), l.conv.out_w());
  const std::int64_t fan_in = l.conv.c_per_group() * l.conv.r * l.conv.s;
  l.weight = weights_(name + ".weight", {l.conv.k, l.conv.c_per_group(), l.conv.r, l.conv.s}, fan_in);
  if (bias) l.bias = weights_(name + ".bias", {l.conv.k}, fan_in);
  return push(std::move(l));
}

int Network::conv_bn(const std::string& name, const std::string& bn, int input, std::int64_t out_channels,
                     std::int64_t kernel, std::int64_t stride, std::int64_t pad, std::int64_t groups,
                     Activation activation) {
  const int index = conv(name, input, out_channels, kernel, stride, pad, groups, /*bias=*/false, activation);
  Layer& l = layers_[index];
  fold_batchnorm(load_batchnorm(weights_, bn, out_channels), l.weight, l.bias);
  return index;
}

int Network::max_pool(const std::string& name, int input, ops::Pool2d pool) {
  Layer l{.name = name, .kind = LayerKind::max_pool, .inputs = {input}, .out_item = ops::pool_output_shape(item_shape(input), pool)};
  l.pool = pool;
  return push(std::move(l));
}

int Network::avg_pool(const std::string& name, int input, ops::Pool2d pool) {
  Layer l{.name = name, .kind = LayerKind::avg_pool, .inputs = {input}, .out_item = ops::pool_output_shape(item_shape(input), pool)};
  l.pool = pool;
  return push(std::move(l));
}

int Network::global_avg_pool(const std::string& name, int input) {
  return push(Layer{.name = name, .kind = LayerKind::global_avg_pool, .inputs = {input},
                    .out_item = nchw(1, item_shape(input).c(), 1, 1)});
}

int Network::linear(const std::string& name, int input, std::int64_t out_features, bool relu) {
  const std::int64_t in_features = item_shape(input).item_elems();  // flatten is implicit in NCHW
  Layer l{.name = name, .kind = LayerKind::linear, .inputs = {input}, .out_item = nchw(1, out_features, 1, 1)};
  l.relu = relu;
  l.weight = weights_(name + ".weight", {out_features, in_features}, in_features);
  l.bias = weights_(name + ".bias", {out_features}, in_features);
  return push(std::move(l));
}

int Network::add(const std::string& name, int a, int b, bool relu) {
  if (item_shape(a) != item_shape(b))
    throw InputError(fmt::format("{}: {} adds tensors of different shapes", name_, name));
  Layer l{.name = name, .kind = LayerKind::add, .inputs = {a, b}, .out_item = item_shape(a)};
  l.relu = relu;
  return push(std::move(l));
}

int Network::softmax(const std::string& name, int input) {
  const Shape in = item_shape(input);
  return push(Layer{.name = name, .kind = LayerKind::softmax, .inputs = {input}, .out_item = nchw(1, in.item_elems(), 1, 1)});
}

std::int64_t Network::parameter_count() const {
  std::int64_t total = 0;
  for (const Layer& l : layers_) total += static_cast<std::int64_t>(l.weight.size() + l.bias.size());
  return total;
}

Network::Work Network::layer_work(std::size_t index, std::int64_t batch, int element_bytes) const {
  const Layer& l = layers_.at(index);
  double elems = static_cast<double>(l.out_item.item_elems());
  for (const int input : l.inputs) elems += static_cast<double>(item_shape(input).item_elems());
  const double n = static_cast<double>(batch), weights = static_cast<double>(l.weight.size());
  Work w{.bytes = (n * elems + weights) * element_bytes + 4.0 * static_cast<double>(l.bias.size())};
  if (l.kind == LayerKind::conv) w.flops = n * l.conv.flops();
  if (l.kind == LayerKind::linear) w.flops = n * 2.0 * weights;
  return w;
}

double Network::flops_per_item() const {
  double total = 0;
  for (const Layer& l : layers_) {
    if (l.kind == LayerKind::conv) total += l.conv.flops();
    if (l.kind == LayerKind::linear) total += 2.0 * static_cast<double>(l.weight.size());
  }
  return total;
}

}  // namespace convlab
