// cpu.00_reference, the oracle, against hand-worked cases and against an independent formula:
// a scatter convolution (each input element pushed to the outputs it feeds), the opposite loop
// order of the reference's gather.
#include <doctest/doctest.h>

#include <vector>

#include "conv_test_util.hpp"
#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"

using namespace convlab;
using test::random_values;

namespace {
const KernelInfo& reference() { return *find_kernel("cpu.00_reference"); }

std::vector<float> ref(const char* descriptor, const std::vector<float>& in, const std::vector<float>& w,
                       const std::vector<float>& b = {}, Activation activation = Activation::none) {
  return test::run_kernel(reference(), parse_problem(descriptor), in, w, b, activation);
}

std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// Scatter form of the definition, in double.
std::vector<double> scatter_conv(const ConvProblem& p, const std::vector<float>& in, const std::vector<float>& w,
                                 const std::vector<float>& b) {
  const std::int64_t oh = p.out_h(), ow = p.out_w(), cg = p.c_per_group(), kg = p.k_per_group();
  std::vector<double> out(static_cast<std::size_t>(p.output_elems()));
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t i = 0; i < oh * ow; ++i) out[(n * p.k + k) * oh * ow + i] = b.empty() ? 0.0 : b[k];
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t c = 0; c < p.c; ++c)
      for (std::int64_t iy = 0; iy < p.h; ++iy)
        for (std::int64_t ix = 0; ix < p.w; ++ix) {
          const double x = in[((n * p.c + c) * p.h + iy) * p.w + ix];
          const std::int64_t g = c / cg;
          for (std::int64_t i = 0; i < p.r; ++i)
            for (std::int64_t j = 0; j < p.s; ++j) {
              // Output row y reads iy = y*stride - pad + i*dilation: invert it.
              const std::int64_t ty = iy + p.pad_h - i * p.dilation_h;
              const std::int64_t tx = ix + p.pad_w - j * p.dilation_w;
              if (ty < 0 || tx < 0 || ty % p.stride_h != 0 || tx % p.stride_w != 0) continue;
              const std::int64_t y = ty / p.stride_h, xo = tx / p.stride_w;
              if (y >= oh || xo >= ow) continue;
              for (std::int64_t k = g * kg; k < (g + 1) * kg; ++k)
                out[((n * p.k + k) * oh + y) * ow + xo] += x * w[((k * cg + (c - g * cg)) * p.r + i) * p.s + j];
            }
        }
  return out;
}
}  // namespace

TEST_CASE("reference: hand-worked cases") {
  SUBCASE("2x2 ones over 1..9, no padding") {
    CHECK(ref("mb1ic1ih3oc1kh2", iota(9, 1), {1, 1, 1, 1}) == std::vector<float>{12, 16, 24, 28});
  }
  SUBCASE("3x3 ones with padding 1 counts neighbours") {
    CHECK(ref("mb1ic1ih3oc1kh3ph1", std::vector<float>(9, 1), std::vector<float>(9, 1)) ==
          std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4});
  }
  SUBCASE("1x1 stride 2 picks every other pixel") {
    CHECK(ref("mb1ic1ih4oc1kh1sh2", iota(16), {2}) == std::vector<float>{0, 4, 16, 20});
  }
  SUBCASE("dh1 (benchdnn; PyTorch dilation 2) spreads a 2x2 kernel over 3x3") {
    const auto out = ref("mb1ic1ih5oc1kh2dh1", iota(25), {1, 1, 1, 1});
    REQUIRE(out.size() == 9);
    CHECK(out[0] == 0 + 2 + 10 + 12);
    CHECK(out[8] == 12 + 14 + 22 + 24);
  }
  SUBCASE("two groups keep their channels apart") {
    // in: channel 0 = 1s, channel 1 = 2s; weights: out0 <- 3 x in0, out1 <- 5 x in1.
    std::vector<float> in = {1, 1, 1, 1, 2, 2, 2, 2};
    CHECK(ref("g2mb1ic2ih2oc2kh1", in, {3, 5}) == std::vector<float>{3, 3, 3, 3, 10, 10, 10, 10});
  }
  SUBCASE("bias then ReLU") {
    CHECK(ref("mb1ic1ih2oc2kh1", {1, -2, 3, -4}, {1, -1}, {0.5f, 0}, Activation::relu) ==
          std::vector<float>{1.5f, 0, 3.5f, 0, 0, 2, 0, 4});
  }
  SUBCASE("bias then ReLU6 clamps to [0, 6]") {
    CHECK(ref("mb1ic1ih2oc1kh1", {1, -2, 3, 4}, {2}, {0.5f}, Activation::relu6) == std::vector<float>{2.5f, 0, 6, 6});
  }
  SUBCASE("two batch items are independent") {
    CHECK(ref("mb2ic1ih2oc1kh1", {1, 2, 3, 4, 5, 6, 7, 8}, {10}) == std::vector<float>{10, 20, 30, 40, 50, 60, 70, 80});
  }
}

TEST_CASE("reference: matches the scatter formula on random shapes") {
  const char* shapes[] = {
      "mb2ic3ih9oc4kh3",                 // plain
      "mb1ic4ih11oc5kh3sh2ph1",          // stride 2 with padding
      "mb2ic3ih10iw7oc2kh3kw2ph2pw1",    // rectangular, padding wider than half the kernel
      "mb1ic2ih12oc3kh3dh1ph2",          // dilation 2 (PyTorch)
      "mb1ic3ih13oc4kh3sh3dh2ph1",       // stride 3, dilation 3
      "g2mb2ic4ih8oc6kh3ph1",            // groups
      "g8mb1ic8ih9oc8kh3sh2ph1",         // depthwise
      "g4mb1ic4ih7oc8kh5ph2",            // depthwise multiplier 2
      "mb3ic16ih5oc8kh1",                // pointwise
      "mb1ic2ih9oc3oh5kh3sh2ph0",        // padded 0 above, 2 below
      "mb1ic2ih8iw9oc3oh8ow8kh3ph0pw1",  // 0 above, 2 below; 1 left, 0 right
  };
  std::uint64_t stream = 1;
  for (const char* text : shapes) {
    CAPTURE(text);
    const ConvProblem p = parse_problem(text);
    const auto in = random_values(p.input_elems(), stream++);
    const auto w = random_values(p.weight_elems(), stream++);
    const auto b = random_values(p.k, stream++);
    const auto got = test::run_kernel(reference(), p, in, w, b, Activation::none);
    const auto want = scatter_conv(p, in, w, b);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      // Both sum in double; the only difference is the final rounding to float.
      CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6).scale(1e-6));
    }
  }
}

TEST_CASE("reference: wrong weight sizes are rejected with the numbers") {
  const ConvProblem p = parse_problem("mb1ic3ih8oc4kh3");
  std::vector<float> w(10), b(4);
  CHECK_THROWS_WITH_AS(reference().plan(p, {w, b}, {}),
                       "mb1ic3ih8oc4oh6kh3: weight has 10 values, the problem needs 108 (oc 4 x ic/g 3 x kh 3 x kw 3)",
                       InputError);
  std::vector<float> w_ok(108), b_bad(3);
  CHECK_THROWS_WITH_AS(reference().plan(p, {w_ok, b_bad}, {}),
                       "mb1ic3ih8oc4oh6kh3: bias has 3 values, the problem needs 4 (oc)", InputError);
}
