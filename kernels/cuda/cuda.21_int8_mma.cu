// cuda.21_int8_mma: cuda.20's int8 implicit GEMM on the tensor cores.
//
// What changes against cuda.20_int8_dp4a: the 64 x 64 tile is multiplied by tensor cores with the
//   warp-wide mma.sync m16n8k32 (s8 x s8, exact int32 accumulation), called through
//   kernels/cuda/mma_s8.cuh: 4 warps, each owning 32 channels x 32 pixels (2 x 4 fragments of
//   16 x 8). Each lane loads its registers straight from shared memory in PTX's fragment layout
//   (no WMMA: its int8 fragments' layout is unspecified, and the epilogue needs to know which
//   outputs a lane holds to requantise them in registers). Shared rows are padded by 4 words so
//   that the 8 lane groups of a fragment load hit 32 different banks. Gather, compensation and
//   the requantising epilogue are cuda.20's (kernels/cuda/int8_gemm.cuh): the output is the int8
//   oracle's, byte for byte.
// Why faster: one mma does 16 x 8 x 32 = 4096 multiply-adds; an H100 or H200 has on paper about
//   2000 dense int8 TOPS on its tensor cores against 130 via __dp4a, so the gather and the global
//   loads become the bound, as for cuda.03 in TF32.
// Measured: not yet on a GPU (checked on the CPU emulator only, whose mma model keeps the
//   fragment layout).
// groups = 1; any stride, padding and dilation. Needs sm_80 or later.
// Run: build/convlab conv --backend cuda --precision int8 --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.21_int8_mma
#include "kernels/cuda/int8_gemm.cuh"
#include "kernels/cuda/mma_s8.cuh"

namespace convlab::cuda {

namespace {
constexpr int kMmaTile = 64, kMmaThreads = 128;  // 4 warps in a 2 x 2 grid of 32 x 32
constexpr int kMmaRowWords = kInt8StepWords + 4;  // a tile row of 8 words, padded against bank conflicts
}  // namespace

// grid: x = pixel tiles over the whole batch, y = output-channel tiles. 128 threads.
__global__ void __launch_bounds__(kMmaThreads) conv_int8_mma(Int8ConvArgs a) {
  __shared__ __align__(16) unsigned as[2][kMmaTile][kMmaRowWords];  // weights: channel x word (A, row-major)
  __shared__ __align__(16) unsigned bs[2][kMmaTile][kMmaRowWords];  // im2col: pixel x word (B, column-major)
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;              // the lane's group and place in it (PTX's names)
  const int wm = warp / 2 * 32, wn = warp % 2 * 32;  // the warp's 32 x 32 of the tile
  const int k0 = blockIdx.y * kMmaTile;
  const long long pix0 = static_cast<long long>(blockIdx.x) * kMmaTile;
  const int steps = int8_padded_taps(a.p.c * a.p.r * a.p.s) / kInt8StepTaps;
  const PixelOrigin origin = pixel_origin(a.p, pix0 + tid % kMmaTile);

  // This thread's share of a step: weight words (channel i / 8, word i % 8) for i = tid + 128 j;
  // im2col words tid / 64 + 2 j of pixel tid % 64 (j = 0..3).
  unsigned w[4], x[4];
  const auto load = [&](int step) {
    for (int j = 0; j < 4; ++j) {
      const int i = tid + j * kMmaThreads;
      w[j] = int8_weight_word(a, k0 + i / kInt8StepWords, step * kInt8StepWords + i % kInt8StepWords);
      x[j] = int8_gather_word(a, origin, step * kInt8StepWords + tid / kMmaTile + 2 * j);
    }
  };
  const auto store = [&](int buffer) {
    for (int j = 0; j < 4; ++j) {
      const int i = tid + j * kMmaThreads;
      as[buffer][i / kInt8StepWords][i % kInt8StepWords] = w[j];
      bs[buffer][tid % kMmaTile][tid / kMmaTile + 2 * j] = x[j];
    }
  };

  int acc[2][4][4] = {};  // [m16 fragment][n8 fragment][the lane's 4 outputs]
  int8_gemm_steps(steps, load, store, [&](int buffer) {
    unsigned fa[2][4], fb[4][2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {  // A: rows g and g + 8, taps 4t.. and 16 + 4t..
      const int row = wm + 16 * i + g;
      fa[i][0] = as[buffer][row][t];
      fa[i][1] = as[buffer][row + 8][t];
      fa[i][2] = as[buffer][row][4 + t];
      fa[i][3] = as[buffer][row + 8][4 + t];
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {  // B: column g, taps 4t.. and 16 + 4t..
      fb[j][0] = bs[buffer][wn + 8 * j + g][t];
      fb[j][1] = bs[buffer][wn + 8 * j + g][4 + t];
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) mma_m16n8k32_s8(acc[i][j], fa[i], fb[j], acc[i][j]);
  });
  // The lane's outputs: rows g (c0, c1) and g + 8 (c2, c3), columns 2t and 2t + 1.
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        int8_store(a, k0 + wm + 16 * i + g + (r / 2) * 8, pix0 + wn + 8 * j + 2 * t + r % 2, acc[i][j][r]);
}

// Its row: groups 1; K rows of taps padded to 32 bytes.
struct int8_mma {
  static std::string unsupported(const ConvProblem& p) { return ungrouped_only(p); }
  static std::vector<signed char> weights(const ConvProblem& p, std::span<const std::int8_t> oihw) {
    return int8_gemm_weights(p, oihw);
  }
  template <class Launch>
  static void launch(Launch& launch, const Int8ConvArgs& a) {
    launch(LaunchShape{{blocks(output_pixels(a.p), kMmaTile), blocks(a.p.k, kMmaTile), 1}, {kMmaThreads, 1, 1}, 0},
           conv_int8_mma, a);
  }
};

}  // namespace convlab::cuda
