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

MetalConv params(const gpu::ConvArgs& a) {
  const gpu::ConvShape& s = a.p;
  return MetalConv{s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride_h, s.stride_w, s.pad_h, s.pad_w, s.dil_h, s.dil_w,
                   s.groups, s.oh, s.ow, a.activation, a.bias != nullptr ? 1 : 0, a.residual != nullptr ? 1 : 0};
}

Dispatch one_per_output(Function f, long long count) { return {f, {blocks(count, kThreads), 1, 1}, {kThreads, 1, 1}}; }
Dispatch simdgroup_per_row(Function f, long long rows) {
  return {f, {blocks(rows, kThreads / kSimdWidth), 1, 1}, {kThreads, 1, 1}};
}
unsigned output_tiles(const gpu::ConvShape& p) { return blocks(p.ow, kTile) * blocks(p.oh, kTile); }

// A kernel's rule and grid, as its line of the list names them, in the list's order.
struct KernelDispatch {
  Function function;
  Dispatch (*grid)(Function, const gpu::ConvShape&);
};
constexpr KernelDispatch kDispatches[] = {
#define CONVLAB_METAL_KERNEL(symbol, id, summary, deterministic, error_scale, support, grid) {Function::conv_##symbol, &grid},
#define CONVLAB_METAL_AUTO(...)
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
};
const gpu::ConvKernel kRows[] = {
#define CONVLAB_METAL_KERNEL(symbol, id, summary, deterministic, error_scale, support, grid) \
  {id, &support, &gpu::oihw_weights, &gpu::no_workspace, false},
#define CONVLAB_METAL_AUTO(...)
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
};

// metal.auto's rule: depthwise layers get their own kernel where the patch fits, ungrouped
// layers the SIMD-group matrix GEMM, other grouped layers the tiled kernel (the naive one when
// its patch is too large).
std::string_view auto_choice(const ConvProblem& p) {
  if (p.is_depthwise() && patch_fits(p).empty()) return "metal.03_depthwise";
  if (p.groups == 1) return "metal.02_simdgroup_matrix";
  return patch_fits(p).empty() ? "metal.01_threadgroup_tiled" : "metal.00_naive";
}

}  // namespace

std::string_view to_string(Function f) {
  switch (f) {
#define CONVLAB_METAL_KERNEL(symbol, ...) \
  case Function::conv_##symbol: return "conv_" #symbol;
#define CONVLAB_METAL_AUTO(...)
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
#define CONVLAB_METAL_FUNCTION(name) \
  case Function::name: return #name;
#include "metal/functions.inc"
#undef CONVLAB_METAL_FUNCTION
  }
  return "?";
}

std::span<const gpu::ConvKernel> conv_kernels() { return kRows; }

const gpu::ConvKernel& conv_kernel(std::string_view kernel_id, const ConvProblem& p) {
  return gpu::find_kernel(conv_kernels(), kernel_id == "metal.auto" ? auto_choice(p) : kernel_id, "Metal");
}

std::string any_problem(const ConvProblem&) { return {}; }
std::string ungrouped_only(const ConvProblem& p) { return p.groups == 1 ? std::string() : "groups > 1"; }

std::string patch_fits(const ConvProblem& p) {  // in 64 bits: p may be far too large for 32
  const long long ph = (kTile - 1) * p.stride_h + (p.r - 1) * p.dilation_h + 1;
  const long long pw = (kTile - 1) * p.stride_w + (p.s - 1) * p.dilation_w + 1;
  if (ph * pw > kPatchCapacity) return fmt::format("an input patch of {}x{} over {} floats", ph, pw, kPatchCapacity);
  if (p.r * p.s > kTapsCapacity) return fmt::format("a {}x{} kernel over {} taps", p.r, p.s, kTapsCapacity);
  return {};
}

std::string depthwise_patch_fits(const ConvProblem& p) {
  return p.is_depthwise() ? patch_fits(p) : "not depthwise (needs groups = C = K)";
}

Dispatch thread_per_output(Function f, const gpu::ConvShape& p) {
  return one_per_output(f, static_cast<long long>(p.n) * p.k * p.oh * p.ow);
}
Dispatch tile_per_channel_block(Function f, const gpu::ConvShape& p) {
  const unsigned channel_blocks = static_cast<unsigned>(p.groups) * blocks(p.k / p.groups, kTiledOutChannels);
  return {f, {output_tiles(p), channel_blocks, static_cast<unsigned>(p.n)}, {kTile, kTile, 1}};
}
Dispatch simdgroup_matrix_tiles(Function f, const gpu::ConvShape& p) {
  return {f, {blocks(static_cast<long long>(p.n) * p.oh * p.ow, kMatrixTile), blocks(p.k, kMatrixTile), 1},
          {4 * kSimdWidth, 1, 1}};
}
Dispatch tile_per_plane(Function f, const gpu::ConvShape& p) {
  return {f, {output_tiles(p), static_cast<unsigned>(p.c), static_cast<unsigned>(p.n)}, {kTile, kTile, 1}};
}

const gpu::ConvKernel& MetalRuntime::conv_kernel(std::string_view kernel_id, const ConvProblem& p) const {
  return metal::conv_kernel(kernel_id, p);
}

void MetalRuntime::conv(const gpu::ConvKernel& kernel, const gpu::ConvArgs& a, float*) {
  const KernelDispatch& d = kDispatches[&kernel - conv_kernels().data()];  // a row conv_kernel returned
  const MetalConv p = params(a);
  const Binding b[] = {{a.in}, {a.weight}, {a.bias}, {a.residual}, {a.out}, {&p, sizeof p}};
  encode(d.grid(d.function, a.p), b);
}

void MetalRuntime::pool(const gpu::PoolArgs& a, bool average) {
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
