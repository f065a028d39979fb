#include "metal/dispatch.hpp"

#include <limits>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab::metal {

namespace {

constexpr unsigned kThreads = 256;                // per threadgroup of the one-thread-per-output kernels
constexpr unsigned kSimdWidth = 32;

unsigned blocks(long long count, long long per) { return static_cast<unsigned>((count + per - 1) / per); }

// metal.01 and metal.03 stage the input under a 16 x 16 output tile in fixed threadgroup arrays.
std::string patch_too_large(const ConvProblem& p) {  // in 64 bits: p may be far too large for 32
  const long long step_h = p.dilation_h + 1, step_w = p.dilation_w + 1;  // oneDNN's dilation: 0 = dense
  const long long ph = (kTile - 1) * p.stride_h + (p.r - 1) * step_h + 1;
  const long long pw = (kTile - 1) * p.stride_w + (p.s - 1) * step_w + 1;
  if (ph * pw > kPatchCapacity) return fmt::format("an input patch of {}x{} over {} floats", ph, pw, kPatchCapacity);
  if (p.r * p.s > kTapsCapacity) return fmt::format("a {}x{} kernel over {} taps", p.r, p.s, kTapsCapacity);
  return {};
}

MetalConv params(const cuda::ConvArgs& a) {
  const cuda::ConvShape& s = a.p;
  return MetalConv{s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride_h, s.stride_w, s.pad_h, s.pad_w, s.dil_h, s.dil_w,
                   s.groups, s.oh, s.ow, a.activation, a.bias != nullptr ? 1 : 0, a.residual != nullptr ? 1 : 0};
}

Dispatch conv_dispatch(Variant v, const cuda::ConvShape& p) {
  const unsigned tiles = blocks(p.ow, kTile) * blocks(p.oh, kTile);
  switch (v) {
    case Variant::naive:
      return {Function::conv_naive, {blocks(static_cast<long long>(p.n) * p.k * p.oh * p.ow, kThreads), 1, 1},
              {kThreads, 1, 1}};
    case Variant::threadgroup_tiled: {
      const unsigned channel_blocks = static_cast<unsigned>(p.groups) * blocks(p.k / p.groups, kTiledOutChannels);
      return {Function::conv_threadgroup_tiled, {tiles, channel_blocks, static_cast<unsigned>(p.n)}, {kTile, kTile, 1}};
    }
    case Variant::simdgroup_matrix:
      return {Function::conv_simdgroup_matrix,
              {blocks(static_cast<long long>(p.n) * p.oh * p.ow, kMatrixTile), blocks(p.k, kMatrixTile), 1},
              {4 * kSimdWidth, 1, 1}};
    case Variant::depthwise:
      return {Function::conv_depthwise, {tiles, static_cast<unsigned>(p.c), static_cast<unsigned>(p.n)},
              {kTile, kTile, 1}};
  }
  throw InputError("unknown Metal variant");
}

Dispatch one_per_output(Function f, long long count) { return {f, {blocks(count, kThreads), 1, 1}, {kThreads, 1, 1}}; }
Dispatch simdgroup_per_row(Function f, long long rows) {
  return {f, {blocks(rows, kThreads / kSimdWidth), 1, 1}, {kThreads, 1, 1}};
}

}  // namespace

std::string_view to_string(Variant v) {
  switch (v) {
    case Variant::naive: return "metal.00_naive";
    case Variant::threadgroup_tiled: return "metal.01_threadgroup_tiled";
    case Variant::simdgroup_matrix: return "metal.02_simdgroup_matrix";
    case Variant::depthwise: return "metal.03_depthwise";
  }
  return "?";
}

std::string_view to_string(Function f) {
  switch (f) {
#define CONVLAB_METAL_FUNCTION(name) \
  case Function::name: return #name;
#include "metal/functions.inc"
#undef CONVLAB_METAL_FUNCTION
  }
  return "?";
}

Variant variant_for(std::string_view id, const ConvProblem& p) {
  if (id == "metal.auto") {
    if (p.is_depthwise() && patch_too_large(p).empty()) return Variant::depthwise;
    if (p.groups == 1) return Variant::simdgroup_matrix;
    return patch_too_large(p).empty() ? Variant::threadgroup_tiled : Variant::naive;
  }
  for (Variant v : {Variant::naive, Variant::threadgroup_tiled, Variant::simdgroup_matrix, Variant::depthwise})
    if (id == to_string(v)) return v;
  throw InputError(fmt::format("'{}' is not a Metal kernel", id));
}

std::string unsupported(Variant v, const ConvProblem& p) {
  if (std::string why = cuda::exceeds_32bit_indices(p); !why.empty()) return why;
  switch (v) {
    case Variant::naive: return {};
    case Variant::threadgroup_tiled: return patch_too_large(p);
    case Variant::simdgroup_matrix: return p.groups == 1 ? std::string() : "groups > 1";
    case Variant::depthwise: return p.is_depthwise() ? patch_too_large(p) : "not depthwise (needs groups = C = K)";
  }
  return "unknown variant";
}

int MetalRuntime::conv_variant(std::string_view kernel_id, const ConvProblem& p) const {
  return static_cast<int>(variant_for(kernel_id, p));
}
std::string MetalRuntime::conv_unsupported(int v, const ConvProblem& p) const {
  return unsupported(static_cast<Variant>(v), p);
}
std::string MetalRuntime::conv_name(int v) const { return std::string(to_string(static_cast<Variant>(v))); }
std::vector<float> MetalRuntime::conv_weights(int, const ConvProblem&, std::span<const float> oihw) const {
  return {oihw.begin(), oihw.end()};  // every Metal kernel reads OIHW
}
std::size_t MetalRuntime::conv_workspace_floats(int, const cuda::ConvShape&) const { return 0; }

void MetalRuntime::conv(int v, const cuda::ConvArgs& a, float*) {
  const MetalConv p = params(a);
  const Binding b[] = {{a.in}, {a.weight}, {a.bias}, {a.residual}, {a.out}, {&p, sizeof p}};
  encode(conv_dispatch(static_cast<Variant>(v), a.p), b);
}

void MetalRuntime::pool(const cuda::PoolArgs& a, bool average) {
  const MetalPool p{a.planes, a.h, a.w, a.oh, a.ow, a.kernel, a.stride, a.pad, average ? 1 : 0};
  const Binding b[] = {{a.in}, {a.out}, {&p, sizeof p}};
  encode(one_per_output(Function::pool2d, static_cast<long long>(a.planes) * a.oh * a.ow), b);
}

void MetalRuntime::global_avg_pool(const float* in, int planes, int plane_size, float* out) {
  const MetalRows p{planes, plane_size};
  const Binding b[] = {{in}, {out}, {&p, sizeof p}};
  encode(simdgroup_per_row(Function::global_avg_pool, planes), b);
}

void MetalRuntime::linear(const float* in, int batch, int in_features, const float* weight, const float* bias,
                          int out_features, float* out, bool relu) {
  const MetalLinear p{batch, in_features, out_features, relu ? 1 : 0, bias != nullptr ? 1 : 0};
  const Binding b[] = {{in}, {weight}, {bias}, {out}, {&p, sizeof p}};
  encode(simdgroup_per_row(Function::linear, static_cast<long long>(batch) * out_features), b);
}

void MetalRuntime::add(const float* a, const float* b, float* out, long long count, bool relu) {
  if (count > std::numeric_limits<int>::max()) throw InputError(fmt::format("metal add: {} elements (the kernels index in 32 bits)", count));
  const MetalAdd p{static_cast<int>(count), relu ? 1 : 0};
  const Binding bind[] = {{a}, {b}, {out}, {&p, sizeof p}};
  encode(one_per_output(Function::add, count), bind);
}

void MetalRuntime::softmax(const float* in, int batch, int classes, float* out) {
  const MetalRows p{batch, classes};
  const Binding b[] = {{in}, {out}, {&p, sizeof p}};
  encode(simdgroup_per_row(Function::softmax, batch), b);
}

}  // namespace convlab::metal
