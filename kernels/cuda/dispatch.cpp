#include "kernels/cuda/dispatch.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab::cuda {

namespace {
constexpr long long kMaxElems = std::numeric_limits<int>::max();  // 32-bit indices in the kernels
constexpr unsigned kMaxGridYZ = 65535;
constexpr unsigned kMaxStaticSharedBytes = 48 * 1024;  // more needs an opt-in per kernel

unsigned blocks(long long count, long long per_block) { return static_cast<unsigned>((count + per_block - 1) / per_block); }

unsigned smem_tiled_bytes(const ConvShape& p) {
  const int ph = (kSmemTile - 1) * p.stride_h + (p.r - 1) * p.dil_h + 1;
  const int pw = (kSmemTile - 1) * p.stride_w + (p.s - 1) * p.dil_w + 1;
  const long long floats = static_cast<long long>(kSmemInChannels) * ph * pw + kSmemOutChannels * kSmemInChannels * p.r * p.s;
  return floats * 4 > kMaxStaticSharedBytes ? kMaxStaticSharedBytes + 1 : static_cast<unsigned>(floats * 4);
}

bool one_by_one(const ConvProblem& p) {
  return p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0 && p.groups == 1;
}
}  // namespace

std::string_view to_string(Variant v) {
  switch (v) {
    case Variant::naive: return "cuda.00_naive";
    case Variant::smem_tiled: return "cuda.01_smem_tiled";
    case Variant::implicit_gemm: return "cuda.02_implicit_gemm";
    case Variant::tensorcore_tf32: return "cuda.03_tensorcore_tf32";
    case Variant::depthwise: return "cuda.04_depthwise";
    case Variant::pointwise: return "cuda.05_pointwise";
    case Variant::implicit_gemm_splitk: return "cuda.06_implicit_gemm_splitk";
    case Variant::tensorcore_tf32_pipelined: return "cuda.07_tensorcore_tf32_pipelined";
  }
  return "?";
}

// cuda.auto's rule, in the order a student would reason: depthwise layers are memory-bound and
// get their own kernel; a 1x1 layer is a plain GEMM; any other ungrouped layer is an implicit
// GEMM, its reduction split across blocks when its tiles alone cannot fill the GPU; grouped
// layers that are not depthwise fall back to the naive kernel. Never TF32: auto keeps FP32
// accuracy (ask for cuda.03 by name).
Variant variant_for(std::string_view id, const ConvProblem& p) {
  if (id == "cuda.auto") {
    if (p.is_depthwise()) return Variant::depthwise;
    if (one_by_one(p)) return Variant::pointwise;
    if (p.groups != 1) return Variant::naive;
    return split_k(to_shape(p)).splits > 1 ? Variant::implicit_gemm_splitk : Variant::implicit_gemm;
  }
  for (Variant v : {Variant::naive, Variant::smem_tiled, Variant::implicit_gemm, Variant::tensorcore_tf32,
                    Variant::depthwise, Variant::pointwise, Variant::implicit_gemm_splitk, Variant::tensorcore_tf32_pipelined})
    if (id == to_string(v)) return v;
  throw InputError(fmt::format("'{}' is not a CUDA kernel", id));
}

std::string exceeds_32bit_indices(const ConvProblem& p) {
  if (p.input_elems() > kMaxElems || p.output_elems() > kMaxElems || p.weight_elems() > kMaxElems)
    return "a tensor of 2^31 elements or more (the kernels index in 32 bits)";
  return {};
}

std::string unsupported(Variant v, const ConvProblem& p) {
  if (std::string why = exceeds_32bit_indices(p); !why.empty()) return why;
  const ConvShape s = to_shape(p);
  switch (v) {
    case Variant::naive: return {};
    case Variant::smem_tiled:
      if (p.n > kMaxGridYZ) return fmt::format("batch {} over {}", p.n, kMaxGridYZ);
      if (smem_tiled_bytes(s) > kMaxStaticSharedBytes) return "the input patch does not fit in 48 KiB of shared memory";
      return {};
    case Variant::implicit_gemm:
    case Variant::implicit_gemm_splitk:
    case Variant::tensorcore_tf32:
    case Variant::tensorcore_tf32_pipelined: return p.groups == 1 ? std::string() : "groups > 1";
    case Variant::depthwise:
      if (!p.is_depthwise()) return "not depthwise (needs groups = C = K)";
      if (blocks(p.out_h() * p.out_w(), 256) > kMaxGridYZ) return "an output plane too large";
      return {};
    case Variant::pointwise:
      if (!one_by_one(p)) return "not 1x1 with stride 1, no padding, groups 1";
      if (p.n > kMaxGridYZ) return fmt::format("batch {} over {}", p.n, kMaxGridYZ);
      return {};
  }
  return "unknown variant";
}

std::vector<float> prepare_weights(Variant v, const ConvProblem& p, std::span<const float> oihw) {
  if (v == Variant::tensorcore_tf32_pipelined) {  // rows padded to whole reduction steps
    const std::int64_t kd_total = p.c * p.r * p.s, padded = round_up(static_cast<int>(kd_total), kTf32PipeBK);
    std::vector<float> t(static_cast<std::size_t>(p.k * padded), 0.0f);
    for (std::int64_t k = 0; k < p.k; ++k)
      std::copy_n(oihw.begin() + k * kd_total, kd_total, t.begin() + k * padded);
    return t;
  }
  if (v != Variant::implicit_gemm && v != Variant::implicit_gemm_splitk && v != Variant::pointwise)
    return {oihw.begin(), oihw.end()};
  const std::int64_t kd_total = p.c_per_group() * p.r * p.s, kp = (p.k + 3) / 4 * 4;
  std::vector<float> t(static_cast<std::size_t>(kd_total * kp), 0.0f);
  for (std::int64_t k = 0; k < p.k; ++k)
    for (std::int64_t kd = 0; kd < kd_total; ++kd) t[static_cast<std::size_t>(kd * kp + k)] = oihw[static_cast<std::size_t>(k * kd_total + kd)];
  return t;
}

ConvShape to_shape(const ConvProblem& p) {
  const auto i = [](std::int64_t v) { return static_cast<int>(v); };
  return ConvShape{.n = i(p.n), .c = i(p.c), .h = i(p.h), .w = i(p.w), .k = i(p.k), .r = i(p.r), .s = i(p.s),
                   .stride_h = i(p.stride_h), .stride_w = i(p.stride_w), .pad_h = i(p.pad_h), .pad_w = i(p.pad_w),
                   .dil_h = i(p.dilation_h + 1), .dil_w = i(p.dilation_w + 1), .groups = i(p.groups),
                   .oh = i(p.out_h()), .ow = i(p.out_w())};
}

SplitK split_k(const ConvShape& p) {
  const long long tiles = static_cast<long long>(blocks(static_cast<long long>(p.n) * p.oh * p.ow, kGemmBN)) *
                          blocks(p.k, kGemmBM);
  const int steps = ceil_div(p.c * p.r * p.s, kGemmBK);
  const int wanted = static_cast<int>(std::clamp<long long>((kSplitKTargetBlocks + tiles - 1) / tiles, 1, std::max(1, steps / 2)));
  SplitK s{.steps_per_split = ceil_div(steps, wanted)};
  s.splits = ceil_div(steps, s.steps_per_split);  // no split left empty
  return s;
}

bool fuses_pool(Variant v) { return v == Variant::implicit_gemm_splitk; }

std::size_t workspace_floats(Variant v, const ConvShape& p) {
  if (v != Variant::implicit_gemm_splitk) return 0;
  return static_cast<std::size_t>(split_k(p).splits) * p.k * p.n * p.oh * p.ow;
}

int to_act(Activation a) {
  switch (a) {
    case Activation::none: return kActNone;
    case Activation::relu: return kActRelu;
    case Activation::relu6: return kActRelu6;
  }
  return kActNone;
}

LaunchShape conv_launch(Variant v, const ConvShape& p) {
  const long long pixels = static_cast<long long>(p.n) * p.oh * p.ow;
  switch (v) {
    case Variant::naive: return elementwise_launch(pixels * p.k);
    case Variant::smem_tiled: {
      const unsigned tiles = blocks(p.oh, kSmemTile) * blocks(p.ow, kSmemTile);
      const unsigned kblocks = blocks(p.k / p.groups, kSmemOutChannels) * p.groups;
      return {{tiles, kblocks, static_cast<unsigned>(p.n)}, {kSmemTile, kSmemTile, 1}, smem_tiled_bytes(p)};
    }
    case Variant::implicit_gemm: return {{blocks(pixels, kGemmBN), blocks(p.k, kGemmBM), 1}, {kGemmThreads, 1, 1}, 0};
    case Variant::tensorcore_tf32:
      return {{blocks(pixels, kTf32Tile), blocks(p.k, kTf32Tile), 1}, {kTf32Threads, 1, 1}, 0};
    case Variant::tensorcore_tf32_pipelined:
      return {{blocks(pixels, kTf32PipeBN), blocks(p.k, kTf32PipeBM), 1}, {kTf32PipeThreads, 1, 1}, 0};
    case Variant::depthwise:
      return {{static_cast<unsigned>(p.n * p.c), blocks(static_cast<long long>(p.oh) * p.ow, 256), 1}, {256, 1, 1}, 0};
    case Variant::pointwise:
      return {{blocks(static_cast<long long>(p.h) * p.w, kGemmBN), blocks(p.k, kGemmBM), static_cast<unsigned>(p.n)},
              {kGemmThreads, 1, 1}, 0};
    case Variant::implicit_gemm_splitk:
      return {{blocks(pixels, kGemmBN), blocks(p.k, kGemmBM), static_cast<unsigned>(split_k(p).splits)}, {kGemmThreads, 1, 1}, 0};
  }
  return {};
}

LaunchShape elementwise_launch(long long count) { return {{blocks(count, 256), 1, 1}, {256, 1, 1}, 0}; }
LaunchShape warp_launch(long long warps) { return {{blocks(warps * 32, 256), 1, 1}, {256, 1, 1}, 0}; }

}  // namespace convlab::cuda
