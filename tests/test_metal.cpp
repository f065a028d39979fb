// The Metal backend where no Mac is: the kernel list and its "needs macOS" path everywhere, and,
// where clang built the emulator's Metal objects, the MSL shim (kernels/simt/msl.hpp) on the small
// kernels of tests/msl_kernels.metal, metal.auto's rule and a GPU lab run. Metal's convolutions
// are swept with every kernel in tests/test_kernels.cpp and its networks checked against PyTorch
// in tests/test_cuda.cpp (both loop over every runtime a kernel runs on).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bench/harness/gpu_model_bench.hpp"
#include "conv_test_util.hpp"
#include "kernels/common/backends.hpp"
#include "kernels/common/error.hpp"
#include "models/catalog.hpp"
#include "models/gpu_network.hpp"
#include "metal/dispatch.hpp"

using namespace convlab;

TEST_CASE("metal: off macOS the kernels are listed with their rules, and planning says the backend needs macOS") {
  if (backend_status(Backend::metal).available) return;  // a Mac: nothing to check
  CHECK(backend_status(Backend::metal).detail == "needs macOS");
  for (const char* id : {"metal.00_naive", "metal.01_threadgroup_tiled", "metal.02_simdgroup_matrix", "metal.03_depthwise",
                         "metal.auto"}) {
    CAPTURE(id);
    const KernelInfo* k = find_kernel(id);
    REQUIRE(k != nullptr);
    CHECK(k->backend == Backend::metal);
  }
  const KernelInfo& matrix = *find_kernel("metal.02_simdgroup_matrix");
  CHECK(matrix.supports(parse_problem("mb1ic3ih8oc8oh8kh3ph1")));
  CHECK(matrix.unsupported(parse_problem("g2mb1ic4ih8oc4oh8kh3ph1")) == "groups > 1");
  const std::vector<float> w(8 * 3 * 9);
  CHECK_THROWS_WITH_AS(matrix.plan(parse_problem("mb1ic3ih8oc8oh8kh3ph1"), ConvWeights{w, {}}, {}),
                       doctest::Contains("needs macOS"), InputError);
}

TEST_CASE("metal: metal.auto picks by rule, and the tiled kernels refuse patches past their threadgroup arrays") {
  CHECK(metal::conv_kernel("metal.auto", parse_problem("g32mb1ic32ih8oc32oh8kh3ph1")).id == "metal.03_depthwise");
  CHECK(metal::conv_kernel("metal.auto", parse_problem("mb1ic3ih8oc64oh8kh3ph1")).id == "metal.02_simdgroup_matrix");
  CHECK(metal::conv_kernel("metal.auto", parse_problem("g2mb1ic4ih8oc4oh8kh3ph1")).id == "metal.01_threadgroup_tiled");
  // 16 outputs at stride 4 with a 5x5 kernel: a 65x65 patch, over 1600 floats.
  const ConvProblem wide = parse_problem("g2mb1ic4ih68oc4oh16kh5sh4");
  CHECK(find_kernel("metal.01_threadgroup_tiled")->unsupported(wide).find("patch of 65x65") != std::string::npos);
  CHECK(metal::conv_kernel("metal.auto", wide).id == "metal.00_naive");
  CHECK(find_kernel("metal.03_depthwise")->unsupported(parse_problem("mb1ic4ih8oc4oh8kh3ph1")).find("not depthwise") == 0);
  CHECK_THROWS_WITH_AS(metal::conv_kernel("cuda.00_naive", wide), doctest::Contains("not a Metal kernel"), InputError);
}

#ifdef CONVLAB_WITH_METAL_EMULATOR

#include "kernels/simt/emulator.hpp"
#include "tests/emulator_test_util.hpp"

extern "C" {
void convlab_msl_write_positions(void* const*);
void convlab_msl_simd_functions(void* const*);
void convlab_msl_neighbour_read(void* const*);
void convlab_msl_divergent_barrier(void* const*);
void convlab_msl_matrix_product(void* const*);
void convlab_msl_to_half(void* const*);
}

namespace {

// Runs an MSL entry point with its buffers, as metal/emulated.cpp does.
void dispatch(void (*entry)(void* const*), simt::LaunchConfig config, std::vector<void*> buffers) {
  simt::launch(config, entry, static_cast<void* const*>(buffers.data()));
}

}  // namespace

TEST_CASE("metal shim: built-in positions map Metal's names onto the grid") {
  const simt::LaunchConfig config{.grid = {2, 3, 1}, .block = {8, 4, 2}};  // 64 threads: 2 SIMD-groups
  const unsigned size[3] = {16, 12, 2};
  std::vector<unsigned> out(12 * 16 * 12 * 2, 999);
  dispatch(convlab_msl_write_positions, config, {out.data()});
  for (unsigned z = 0; z < size[2]; ++z)
    for (unsigned y = 0; y < size[1]; ++y)
      for (unsigned x = 0; x < size[0]; ++x) {
        const unsigned* o = &out[12 * (x + size[0] * (y + size[1] * z))];
        const unsigned local[3] = {x % 8, y % 4, z % 2}, index = local[0] + 8 * (local[1] + 4 * local[2]);
        const std::vector<unsigned> want = {x, y, z, local[0], local[1], local[2], x / 8, y / 4, z / 2,
                                            index, index / 32, index % 32};
        REQUIRE(std::vector<unsigned>(o, o + 12) == want);
      }
}

TEST_CASE("metal shim: simd_sum, simd_shuffle_down and simd_max over a SIMD-group of 32 lanes") {
  std::vector<float> in(64), sums(64), down(64), maxima(64);
  for (int i = 0; i < 64; ++i) in[i] = static_cast<float>((i * 7) % 64);
  dispatch(convlab_msl_simd_functions, {.grid = {1}, .block = {64}}, {in.data(), sums.data(), down.data(), maxima.data()});
  for (int group = 0; group < 2; ++group) {
    float sum = 0, top = 0;
    for (int lane = 0; lane < 32; ++lane) sum += in[group * 32 + lane], top = std::max(top, in[group * 32 + lane]);
    for (int lane = 0; lane < 32; ++lane) {
      const int i = group * 32 + lane;
      CHECK(sums[i] == sum);
      CHECK(maxima[i] == top);
      CHECK(down[i] == (lane < 31 ? in[i + 1] : in[i]));  // the last lane keeps its own value
    }
  }
}

TEST_CASE("metal shim: threadgroup arrays are shared and poisoned, so a missing barrier shows as NaN") {
  std::vector<float> out(64);
  int with_barrier = 1;
  dispatch(convlab_msl_neighbour_read, {.grid = {1}, .block = {64}}, {out.data(), &with_barrier});
  for (int t = 0; t < 64; ++t) CHECK(out[t] == static_cast<float>((t + 1) % 64));
  with_barrier = 0;
  dispatch(convlab_msl_neighbour_read, {.grid = {1}, .block = {64}}, {out.data(), &with_barrier});
  for (int t = 0; t < 63; ++t) CHECK(std::isnan(out[t]));  // read before its writer ran
  CHECK(out[63] == 0.0f);
}

TEST_CASE("metal shim: divergent threadgroup barriers are an error naming both lines of the .metal file") {
  std::vector<float> out(64);
  const std::string e = test::emulator_error([&] { dispatch(convlab_msl_divergent_barrier, {.grid = {1}, .block = {64}}, {out.data()}); });
  CHECK(e.find("barrier divergence") != std::string::npos);
  CHECK(e.find("msl_kernels.metal:38") != std::string::npos);
  CHECK(e.find("msl_kernels.metal:40") != std::string::npos);
}

TEST_CASE("metal shim: simdgroup_float8x8 multiply-accumulate in FP32, with a transposed load") {
  std::vector<float> a(64), b(64), c(64);
  for (int i = 0; i < 64; ++i) a[i] = static_cast<float>(i % 9) - 4, b[i] = static_cast<float>(i % 5) * 0.5f;
  dispatch(convlab_msl_matrix_product, {.grid = {1}, .block = {32}}, {a.data(), b.data(), c.data()});
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      float want = 1;
      for (int k = 0; k < 8; ++k) want += a[i * 8 + k] * b[j * 8 + k];  // b^T
      CHECK(c[i * 8 + j] == want);
    }
}

TEST_CASE("metal shim: half rounds to binary16 (11 significant bits, to nearest even, overflow to infinity)") {
  const std::vector<float> in = {1.0f + 0x1p-10f, 1.0f + 0x1p-12f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65520.0f, 0x1p-24f, -2.5f};
  const std::vector<float> want = {1.0f + 0x1p-10f, 1.0f, 1.0f + 0x1p-9f, 65504.0f, std::numeric_limits<float>::infinity(),
                                   0x1p-24f, -2.5f};
  std::vector<float> out(in.size());
  dispatch(convlab_msl_to_half, {.grid = {1}, .block = {static_cast<unsigned>(in.size())}}, {const_cast<float*>(in.data()), out.data()});
  CHECK(out == want);
}

TEST_CASE("metal: a GPU lab run on the emulated Metal kernels gives its rows, checked against the oracle") {
  const Network net = find_model("mobilenet-tiny")->build(seeded_weights(1));
  const ModelBenchConfig config{.model = "mobilenet-tiny", .backend = Backend::metal, .kernels = {"metal.auto"}, .batches = {1},
                         .protocol = {.warmup = 0, .trials = 2}};
  const std::vector<Result> rows = run_gpu_model_bench(config, net, test::metal_emulator(), {});
  REQUIRE(rows.size() == 2);  // eager, eager+transfers
  for (const Result& r : rows) {
    CAPTURE(r.mode);
    CHECK(r.status == ResultStatus::ok);
    CHECK(r.kernel == "metal.auto");
    CHECK(r.backend == "metal");
    CHECK(r.mistrusted.empty());
  }
}

#endif  // CONVLAB_WITH_METAL_EMULATOR
