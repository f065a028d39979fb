// cuda.05_pointwise: 1x1 convolution (stride 1, no padding, groups 1) as a plain GEMM per image.
//
// What changes against cuda.02: for a 1x1 kernel the im2col matrix IS the input: row c of image
//   n is the channel plane, contiguous in memory. So the gather and its index arithmetic go away
//   and the input tile is fetched as float4 rows like the weights; the same 64 x 64 register
//   tile multiplies them (kernels/cuda/gemm_tile.cuh). Tiles stay inside one image (grid z).
// Why faster: no divisions per loaded element and 4x fewer load instructions for the input.
//   These layers (MobileNet's pointwise convs) carry most of the network's FLOPs; expect the
//   register tile's bound, 40-60% of the FP32 peak on large ones.
// Measured: not yet measured on a GPU as a single layer (bench/RESULTS.md times it only inside
//   cuda.auto's network rows).
// Run: build/convlab conv --backend cuda --problem mb32ic64ih32oc128oh32kh1 --kernel cuda.05_pointwise
#include "kernels/cuda/cuda_kernels.cuh"
#include "kernels/cuda/gemm_tile.cuh"

namespace convlab::cuda {

namespace {

// The thread's float4 of the input tile: channel row kd0 + tid / 16, pixels (tid % 16) * 4...
// A plane whose size is not a multiple of 4 is not float4-aligned: then 4 scalar loads.
__device__ __forceinline__ float4 load_rows(const ConvArgs& a, int n, int kd0, int p0) {
  const int plane = a.p.h * a.p.w;
  const int c = kd0 + threadIdx.x / 16, q = p0 + (threadIdx.x % 16) * 4;
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (c >= a.p.c || q >= plane) return v;
  const float* row = a.in + (static_cast<long long>(n) * a.p.c + c) * plane;
  if (plane % 4 == 0) return __ldg(reinterpret_cast<const float4*>(row + q));
  v.x = __ldg(row + q);
  if (q + 1 < plane) v.y = __ldg(row + q + 1);
  if (q + 2 < plane) v.z = __ldg(row + q + 2);
  if (q + 3 < plane) v.w = __ldg(row + q + 3);
  return v;
}

__device__ __forceinline__ void store_rows(float (*bs)[kGemmBN], float4 v) {
  *reinterpret_cast<float4*>(&bs[threadIdx.x / 16][(threadIdx.x % 16) * 4]) = v;
}

}  // namespace

// grid: x = pixel tiles of one image, y = output-channel tiles, z = n. 256 threads.
__global__ void __launch_bounds__(kGemmThreads) conv_pointwise(ConvArgs a) {
  __shared__ __align__(16) float as[2][kGemmBK][kGemmBM];
  __shared__ __align__(16) float bs[2][kGemmBK][kGemmBN];
  const int n = blockIdx.z, k0 = blockIdx.y * kGemmBM, p0 = blockIdx.x * kGemmBN;

  float acc[4][4] = {};
  float4 w = gemm_load_weights(a, a.p.c, 0, k0);
  float4 x = load_rows(a, n, 0, p0);
  gemm_store_weights(as[0], w);
  store_rows(bs[0], x);
  __syncthreads();
  const int steps = ceil_div(a.p.c, kGemmBK);
  for (int step = 0; step < steps; ++step) {
    const int cur = step % 2;
    const bool more = step + 1 < steps;
    if (more) {
      w = gemm_load_weights(a, a.p.c, (step + 1) * kGemmBK, k0);
      x = load_rows(a, n, (step + 1) * kGemmBK, p0);
    }
    gemm_multiply(as[cur], bs[cur], acc);
    if (more) {
      gemm_store_weights(as[1 - cur], w);
      store_rows(bs[1 - cur], x);
    }
    __syncthreads();
  }
  const long long image = static_cast<long long>(n) * a.p.h * a.p.w;
  gemm_store_outputs(a, acc, k0, image + p0, image + a.p.h * a.p.w);  // the tile stops at the plane's end
}

// Its row: 1x1 layers only (one_by_one, which cuda.auto's rule shares), the batch within grid z;
// weights transposed for the GEMM tile.
struct pointwise : KernelDefaults {
  static std::string unsupported(const ConvProblem& p) {
    if (!one_by_one(p)) return "not 1x1 with stride 1, no padding, groups 1";
    return batch_over_grid_z(p);
  }
  static std::vector<float> weights(const ConvProblem& p, std::span<const float> oihw) { return gemm_weights(p, oihw); }
  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* /*workspace*/) {
    const ConvShape& p = a.p;
    launch(LaunchShape{{blocks(static_cast<long long>(p.h) * p.w, kGemmBN), blocks(p.k, kGemmBM), static_cast<unsigned>(p.n)},
                       {kGemmThreads, 1, 1}, 0},
           conv_pointwise, a);
  }
};

}  // namespace convlab::cuda
