// cuda.06_implicit_gemm_splitk: cuda.02 with the reduction split across blocks, for small batches.
//
// What changes against cuda.02: at batch 1 a deep layer has few output tiles (resnet8's last
//   block: one 64 x 64 tile, so ONE block on a 132-multiprocessor GPU) and a long reduction
//   (64 x 3 x 3 = 576 taps: 36 steps one after another). Here the reduction is also split across
//   blocks (grid z): each block sums its share of the steps into a workspace, and a second kernel
//   adds the shares in a fixed order and applies the epilogue. split_k (dispatch.cpp) picks the
//   splits from the problem alone, so the result is the same on every run and every device.
// Why faster: a latency-bound layer becomes many short blocks in parallel, for the price of
//   splits x K x pixels partial sums and one more launch, small at batch 1 (at batch 32 there are
//   tiles enough and cuda.auto keeps cuda.02). The second kernel can also do the pool after the
//   conv (models/gpu_network.cpp fuses it), saving that launch and a round trip of the output.
// Measured: on an H200 (bench/RESULTS.md), resnet8 at batch 1 with a CUDA Graph, 0.182 ms with
//   cuda.02 -> 0.074 ms; the fused pools are not yet measured on a GPU.
// groups = 1; any stride, padding and dilation.
// Run: build/convlab conv --backend cuda --problem mb1ic64ih8oc64oh8kh3ph1 --kernel cuda.02_implicit_gemm,cuda.06_implicit_gemm_splitk
#include "kernels/cuda/cuda_kernels.cuh"
#include "kernels/cuda/implicit_gemm.cuh"
#include "kernels/cuda/reductions.cuh"

namespace convlab::cuda {

// grid: x = pixel tiles, y = output-channel tiles, z = splits of the reduction. 256 threads.
// partial[z][k][pixel] receives the raw sums, no epilogue.
__global__ void __launch_bounds__(kGemmThreads) conv_implicit_gemm_splitk(ConvArgs a, float* partial, int steps_per_split) {
  __shared__ __align__(16) float as[2][kGemmBK][kGemmBM];
  __shared__ __align__(16) float bs[2][kGemmBK][kGemmBN];
  const int k0 = blockIdx.y * kGemmBM;
  const long long pix0 = static_cast<long long>(blockIdx.x) * kGemmBN;
  const int steps = ceil_div(a.p.c * a.p.r * a.p.s, kGemmBK);
  const int begin = blockIdx.z * steps_per_split, end = min(steps, begin + steps_per_split);
  float acc[4][4] = {};
  implicit_gemm_steps(a, k0, pix0, begin, end, as, bs, acc);

  const long long pixels = static_cast<long long>(a.p.oh) * a.p.ow * a.p.n;
  const long long pix = pix0 + threadIdx.x % 16 * 4;
  float* share = partial + static_cast<long long>(blockIdx.z) * a.p.k * pixels;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int k = k0 + threadIdx.x / 16 * 4 + i;
    if (k >= a.p.k) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (pix + j < pixels) share[k * pixels + pix + j] = acc[i][j];
  }
}

namespace {
// Conv output (k, pix) (pix: the pixel's index over the whole batch) from its shares, summed in
// split order, with the epilogue; `i` is the output's NCHW index (for the residual).
__device__ __forceinline__ float splitk_output(const ConvArgs& a, const float* partial, int splits, int k, long long pix,
                                               long long i) {
  const long long pixels = static_cast<long long>(a.p.oh) * a.p.ow * a.p.n;
  float sum = 0.0f;
  for (int z = 0; z < splits; ++z) sum += partial[(static_cast<long long>(z) * a.p.k + k) * pixels + pix];
  return conv_epilogue(a, k, i, sum);
}
}  // namespace

// One thread per output, NCHW order: the conv's outputs, or with a.pool.kind kPoolMax or kPoolAvg
// the pooled outputs, each from the conv outputs of its window.
__global__ void splitk_reduce(ConvArgs a, const float* partial, int splits) {
  const bool pooled = a.pool.kind != kPoolNone;
  const int oh = pooled ? a.pool.oh : a.p.oh, ow = pooled ? a.pool.ow : a.p.ow;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(a.p.n) * a.p.k * oh * ow) return;
  const int k = static_cast<int>(i / (static_cast<long long>(oh) * ow) % a.p.k);
  const long long n = i / (static_cast<long long>(oh) * ow * a.p.k);
  const long long plane = static_cast<long long>(a.p.oh) * a.p.ow;
  const auto at = [&](int y, int x) {
    const long long q = static_cast<long long>(y) * a.p.ow + x;
    return splitk_output(a, partial, splits, k, n * plane + q, (n * a.p.k + k) * plane + q);
  };
  const int x = static_cast<int>(i % ow), y = static_cast<int>(i / ow % oh);
  a.out[i] = pooled ? pool_window(a.pool.kind, a.p.oh, a.p.ow, a.pool.kernel, a.pool.stride, a.pool.pad, y, x, at)
                    : at(y, x);
}

// With a.pool.kind kPoolGlobalAvg: one warp per output plane (n, k), out = the mean of the
// plane's conv outputs (summed by lanes, then by shuffles, as ops.cu's global_avg_pool).
__global__ void splitk_reduce_global_avg(ConvArgs a, const float* partial, int splits) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (warp >= a.p.n * a.p.k) return;  // whole warps leave together
  const int n = warp / a.p.k, k = warp % a.p.k;
  const long long plane = static_cast<long long>(a.p.oh) * a.p.ow;
  float sum = 0.0f;
  for (long long q = lane; q < plane; q += 32)
    sum += splitk_output(a, partial, splits, k, n * plane + q, static_cast<long long>(warp) * plane + q);
  sum = warp_sum(sum);
  if (lane == 0) a.out[warp] = sum / static_cast<float>(plane);
}

// Its row: groups 1; weights transposed for the GEMM tile; a workspace of partial sums; the pool
// after it done by its reduction kernel.
struct implicit_gemm_splitk : KernelDefaults {
  static std::string unsupported(const ConvProblem& p) { return ungrouped_only(p); }
  static std::vector<float> weights(const ConvProblem& p, std::span<const float> oihw) { return gemm_weights(p, oihw); }
  static std::size_t workspace_floats(const ConvShape& p) {
    return static_cast<std::size_t>(split_k(p).splits) * p.k * p.n * p.oh * p.ow;
  }
  static constexpr bool fuses_pool = true;

  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* workspace) {
    const SplitK split = split_k(a.p);
    launch(LaunchShape{{blocks(output_pixels(a.p), kGemmBN), blocks(a.p.k, kGemmBM), static_cast<unsigned>(split.splits)},
                       {kGemmThreads, 1, 1}, 0},
           conv_implicit_gemm_splitk, a, workspace, split.steps_per_split);
    const float* partial = workspace;
    const long long planes = static_cast<long long>(a.p.n) * a.p.k;
    if (a.pool.kind == kPoolGlobalAvg) return launch(warp_launch(planes), splitk_reduce_global_avg, a, partial, split.splits);
    const bool pooled = a.pool.kind != kPoolNone;
    const long long outputs = planes * (pooled ? a.pool.oh : a.p.oh) * (pooled ? a.pool.ow : a.p.ow);
    launch(elementwise_launch(outputs), splitk_reduce, a, partial, split.splits);
  }
};

}  // namespace convlab::cuda
