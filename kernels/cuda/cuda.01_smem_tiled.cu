// cuda.01_smem_tiled: a block stages input and weight tiles in shared memory.
//
// What changes against cuda.00: a block of 16 x 16 threads owns a 16 x 16 output tile of one
//   image for 8 output channels (each thread 8 accumulators). For each chunk of 8 input channels
//   the block copies the input patch under the tile (with its halo) and the 8 x 8 x R x S weights
//   into shared memory once, then every thread reads them from there.
// Why faster: an input value loaded from global memory is reused by up to R x S threads and 8
//   output channels out of shared memory, a weight by all 256 threads (a broadcast read), so
//   global traffic drops by about R x S x 8. Still bound by shared-memory loads: each FMA needs
//   one (the weight is a broadcast, the input is not). Expect 10-25% of the FP32 peak.
// Measured: on an H200 (bench/RESULTS.md, batch 32), 5.6 TFLOP/s on mb32ic64ih56oc64oh56kh3ph1,
//   3x cuda.00; 4.4-4.5 on resnet8's largest layer (cuDNN FP32 there: 2.7-4.4).
// Every stride, padding, dilation and group count, while the patch fits in 48 KiB of shared
//   memory (its row, at the end of this file, checks).
// Run: build/convlab conv --backend cuda --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.01_smem_tiled
#include "kernels/cuda/cuda_kernels.cuh"

namespace convlab::cuda {

// Output tile side, output channels per block, input channels per chunk.
constexpr int kSmemTile = 16, kSmemOutChannels = 8, kSmemInChannels = 8;

// grid: x = output tiles of one image (tiles_w * tiles_h), y = groups * channel blocks, z = n.
__global__ void conv_smem_tiled(ConvArgs a) {
  constexpr int T = kSmemTile, KB = kSmemOutChannels, CC = kSmemInChannels;
  CONVLAB_DYNAMIC_SHARED(float, smem);
  const ConvShape& p = a.p;
  const int patch_h = (T - 1) * p.stride_h + (p.r - 1) * p.dil_h + 1;
  const int patch_w = (T - 1) * p.stride_w + (p.s - 1) * p.dil_w + 1;
  const int rs = p.r * p.s;
  float* patch = smem;                        // [CC][patch_h][patch_w]
  float* taps = smem + CC * patch_h * patch_w;  // [KB][CC][R*S]

  const int tiles_w = ceil_div(p.ow, T);
  const int oy0 = blockIdx.x / tiles_w * T, ox0 = blockIdx.x % tiles_w * T;
  const int cpg = p.c / p.groups, kpg = p.k / p.groups;
  const int blocks_per_group = ceil_div(kpg, KB);
  const int g = blockIdx.y / blocks_per_group;
  const int k0 = g * kpg + blockIdx.y % blocks_per_group * KB;  // first output channel of this block
  const int kcount = min(KB, (g + 1) * kpg - k0);
  const int n = blockIdx.z;
  const int tid = threadIdx.y * T + threadIdx.x;

  float acc[KB];
  for (int j = 0; j < KB; ++j) acc[j] = 0.0f;

  for (int cc0 = 0; cc0 < cpg; cc0 += CC) {
    // Stage the patch; zeros stand for padding and for channels past the group's end.
    for (int i = tid; i < CC * patch_h * patch_w; i += T * T) {
      const int c = i / (patch_h * patch_w), yx = i % (patch_h * patch_w);
      const int y = oy0 * p.stride_h - p.pad_h + yx / patch_w, x = ox0 * p.stride_w - p.pad_w + yx % patch_w;
      const bool inside = cc0 + c < cpg && y >= 0 && y < p.h && x >= 0 && x < p.w;
      patch[i] = inside ? a.in[((static_cast<long long>(n) * p.c + g * cpg + cc0 + c) * p.h + y) * p.w + x] : 0.0f;
    }
    for (int i = tid; i < KB * CC * rs; i += T * T) {
      const int kk = i / (CC * rs), c = i / rs % CC, tap = i % rs;
      const bool inside = kk < kcount && cc0 + c < cpg;
      taps[i] = inside ? a.weight[(static_cast<long long>(k0 + kk) * cpg + cc0 + c) * rs + tap] : 0.0f;
    }
    __syncthreads();
    for (int c = 0; c < CC; ++c) {
      for (int r = 0; r < p.r; ++r) {
        for (int s = 0; s < p.s; ++s) {
          const float x = patch[(c * patch_h + threadIdx.y * p.stride_h + r * p.dil_h) * patch_w +
                                threadIdx.x * p.stride_w + s * p.dil_w];
#pragma unroll
          for (int j = 0; j < KB; ++j) acc[j] += x * taps[(j * CC + c) * rs + r * p.s + s];
        }
      }
    }
    __syncthreads();  // the next chunk overwrites the tiles
  }

  const int oy = oy0 + threadIdx.y, ox = ox0 + threadIdx.x;
  if (oy >= p.oh || ox >= p.ow) return;
  for (int j = 0; j < kcount; ++j) {
    const long long i = ((static_cast<long long>(n) * p.k + k0 + j) * p.oh + oy) * p.ow + ox;
    a.out[i] = conv_epilogue(a, k0 + j, i, acc[j]);
  }
}

namespace {
// Bytes a block stages: the input patch under its tile (with halo) for a chunk of input channels,
// and that chunk's weights; more than kMaxStaticSharedBytes when they do not fit.
unsigned smem_tiled_bytes(const ConvShape& p) {
  const int ph = (kSmemTile - 1) * p.stride_h + (p.r - 1) * p.dil_h + 1;
  const int pw = (kSmemTile - 1) * p.stride_w + (p.s - 1) * p.dil_w + 1;
  const long long floats = static_cast<long long>(kSmemInChannels) * ph * pw + kSmemOutChannels * kSmemInChannels * p.r * p.s;
  return floats * 4 > kMaxStaticSharedBytes ? kMaxStaticSharedBytes + 1 : static_cast<unsigned>(floats * 4);
}
}  // namespace

// Its row: OIHW weights; the patch must fit in 48 KiB of shared memory, the batch in grid z.
struct smem_tiled : KernelDefaults {
  static std::string unsupported(const ConvProblem& p) {
    if (std::string why = batch_over_grid_z(p); !why.empty()) return why;
    if (smem_tiled_bytes(gpu::to_shape(p)) > kMaxStaticSharedBytes) return "the input patch does not fit in 48 KiB of shared memory";
    return {};
  }
  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* /*workspace*/) {
    const ConvShape& p = a.p;
    const unsigned tiles = blocks(p.oh, kSmemTile) * blocks(p.ow, kSmemTile);
    const unsigned kblocks = blocks(p.k / p.groups, kSmemOutChannels) * p.groups;
    launch(LaunchShape{{tiles, kblocks, static_cast<unsigned>(p.n)}, {kSmemTile, kSmemTile, 1}, smem_tiled_bytes(p)},
           conv_smem_tiled, a);
  }
};

}  // namespace convlab::cuda
