// cuda.02_implicit_gemm: the convolution as a GEMM whose input matrix is never built.
//
// What changes against cuda.01: the output is seen as a matrix, K output channels x N*OH*OW
//   pixels, the product of the weights (K x C*R*S) and the im2col matrix (C*R*S x pixels). A
//   block computes a 64 x 64 tile of it with 4 x 4 outputs per thread in registers
//   (kernels/cuda/gemm_tile.cuh); the im2col tile is gathered straight from the NCHW input into
//   shared memory ("implicit"), the weights, transposed in plan, arrive as float4 loads. The next
//   tile is fetched into registers while the current one is multiplied (double buffering), so one
//   barrier per step suffices. The main loop is kernels/cuda/implicit_gemm.cuh (cuda.06 shares it).
// Why faster: 16 FMAs per pair of shared-memory loads instead of 8 per 1 + a broadcast, and
//   tiles that span images, so batch 32 fills the GPU even where one image is small. Expect
//   30-50% of the FP32 peak on large layers; the index arithmetic of the gather is the overhead.
// Measured: on an H200 (bench/RESULTS.md, batch 32), 19 TFLOP/s on mb32ic64ih56oc64oh56kh3ph1,
//   0.69-0.80x cuDNN FP32.
// groups = 1; any stride, padding and dilation.
// Run: build/convlab conv --backend cuda --problem mb32ic64ih56oc64oh56kh3ph1 --kernel cuda.02_implicit_gemm
#include "kernels/cuda/cuda_kernels.cuh"
#include "kernels/cuda/implicit_gemm.cuh"

namespace convlab::cuda {

// grid: x = pixel tiles over the whole batch, y = output-channel tiles. 256 threads.
__global__ void __launch_bounds__(kGemmThreads) conv_implicit_gemm(ConvArgs a) {
  __shared__ __align__(16) float as[2][kGemmBK][kGemmBM];
  __shared__ __align__(16) float bs[2][kGemmBK][kGemmBN];
  const int k0 = blockIdx.y * kGemmBM;
  const long long pix0 = static_cast<long long>(blockIdx.x) * kGemmBN;
  float acc[4][4] = {};
  implicit_gemm_steps(a, k0, pix0, 0, ceil_div(a.p.c * a.p.r * a.p.s, kGemmBK), as, bs, acc);
  gemm_store_outputs(a, acc, k0, pix0, static_cast<long long>(a.p.oh) * a.p.ow * a.p.n);
}

// Its row: groups 1; weights transposed for the GEMM tile.
struct implicit_gemm : KernelDefaults {
  static std::string unsupported(const ConvProblem& p) { return ungrouped_only(p); }
  static std::vector<float> weights(const ConvProblem& p, std::span<const float> oihw) { return gemm_weights(p, oihw); }
  template <class Launch>
  static void launch(Launch& launch, const ConvArgs& a, float* /*workspace*/) {
    launch(LaunchShape{{blocks(output_pixels(a.p), kGemmBN), blocks(a.p.k, kGemmBM), 1}, {kGemmThreads, 1, 1}, 0},
           conv_implicit_gemm, a);
  }
};

}  // namespace convlab::cuda
