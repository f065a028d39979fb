// The non-convolution operators against hand-worked values.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/error.hpp"
#include "kernels/cpu/ops.hpp"

using namespace convlab;

TEST_CASE("ops: max and average pooling") {
  // 1x1x4x4 with values 0..15
  std::vector<float> in(16);
  for (int i = 0; i < 16; ++i) in[i] = static_cast<float>(i);
  const Shape s = nchw(1, 1, 4, 4);
  std::vector<float> out(4);
  ops::max_pool2d(in.data(), s, out.data(), {.kernel = 2, .stride = 2});
  CHECK(out == std::vector<float>{5, 7, 13, 15});
  ops::avg_pool2d(in.data(), s, out.data(), {.kernel = 2, .stride = 2});
  CHECK(out == std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});

  SUBCASE("padding: never the max, zeros in the average (count_include_pad)") {
    std::vector<float> neg = {-1, -2, -3, -4};
    const Shape s2 = nchw(1, 1, 2, 2);
    CHECK(ops::pool_output_shape(s2, {.kernel = 2, .stride = 1, .pad = 1}) == nchw(1, 1, 3, 3));
    std::vector<float> o9(9);
    ops::max_pool2d(neg.data(), s2, o9.data(), {.kernel = 2, .stride = 1, .pad = 1});
    CHECK(o9 == std::vector<float>{-1, -1, -2, -1, -1, -2, -3, -3, -4});
    ops::avg_pool2d(neg.data(), s2, o9.data(), {.kernel = 2, .stride = 1, .pad = 1});
    CHECK(o9[0] == -0.25f);
    CHECK(o9[4] == -2.5f);
  }
  SUBCASE("odd sizes floor like PyTorch") {
    CHECK(ops::pool_output_shape(nchw(2, 3, 5, 7), {.kernel = 2, .stride = 2}) == nchw(2, 3, 2, 3));
  }
  SUBCASE("2x2 stride 2 (a path of its own) on odd planes and on rows of 2-32 bytes, FP32 and quint8: each window's max and mean") {
    // 7 columns: the scalar tail alone; 53 and 77: quint8 max's vectors of 32, 16 and 8 outputs,
    // and tails. Rows that divide 32 bytes on an even height (with VBMI one run of row pairs, 64
    // bytes at a time): 288, 72 and 144 bytes leave a last part-block; 16 and 32 columns do not.
    for (const auto& size : {std::pair<std::int64_t, std::int64_t>{5, 7}, {5, 53}, {5, 77}, {6, 8}, {6, 2}, {6, 4},
                             {6, 16}, {2, 32}, {4, 32}}) {
      const std::int64_t h = size.first, w = size.second;  // (not a structured binding: clang 14 cannot capture one)
      CAPTURE(h);
      CAPTURE(w);
      const Shape shape = nchw(2, 3, h, w);
      const std::int64_t oh = h / 2, ow = w / 2, planes = 6;
      std::vector<float> x(static_cast<std::size_t>(shape.elems()));
      std::vector<std::uint8_t> q(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) q[i] = static_cast<std::uint8_t>(i * 97 % 251), x[i] = q[i] * 0.5f - 40;
      std::vector<float> max(static_cast<std::size_t>(planes * oh * ow)), avg(max.size());
      std::vector<std::uint8_t> qmax(max.size() + 16, 0xA5), qavg(max.size());  // 16 more: nothing written past the end
      ops::max_pool2d(x.data(), shape, max.data(), {.kernel = 2, .stride = 2});
      ops::avg_pool2d(x.data(), shape, avg.data(), {.kernel = 2, .stride = 2});
      ops::max_pool2d_u8(q.data(), shape, qmax.data(), {.kernel = 2, .stride = 2});
      ops::avg_pool2d_u8(q.data(), shape, qavg.data(), {.kernel = 2, .stride = 2}, 7);
      for (std::int64_t plane = 0; plane < planes; ++plane)
        for (std::int64_t y = 0; y < oh; ++y)
          for (std::int64_t xo = 0; xo < ow; ++xo) {
            const auto at = static_cast<std::size_t>(plane * h * w + 2 * y * w + 2 * xo), o = static_cast<std::size_t>((plane * oh + y) * ow + xo);
            const std::size_t window[] = {at, at + 1, at + static_cast<std::size_t>(w), at + static_cast<std::size_t>(w) + 1};
            float m = -1e9f, sum = 0;
            int qm = 0, qsum = 0;
            for (const std::size_t i : window) m = std::max(m, x[i]), sum += x[i], qm = std::max(qm, int{q[i]}), qsum += q[i] - 7;
            CHECK(max[o] == m);
            CHECK(avg[o] == doctest::Approx(sum / 4));
            CHECK(int{qmax[o]} == qm);
            CHECK(int{qavg[o]} == std::clamp(static_cast<int>(std::nearbyint(qsum / 4.0f)) + 7, 0, 255));
          }
      CHECK(std::count(qmax.end() - 16, qmax.end(), 0xA5) == 16);
    }
  }
  SUBCASE("bad pools are errors, not crashes") {
    CHECK_THROWS_AS(ops::pool_output_shape(nchw(1, 1, 2, 2), {.kernel = 3, .stride = 1}), InputError);
    CHECK_THROWS_AS(ops::pool_output_shape(nchw(1, 1, 4, 4), {.kernel = 2, .stride = 0}), InputError);
  }
}

TEST_CASE("ops: global average pool, linear, softmax, add, relu") {
  std::vector<float> in = {1, 2, 3, 4, 10, 20, 30, 40};  // 1x2x2x2
  std::vector<float> gap(2);
  ops::global_avg_pool(in.data(), nchw(1, 2, 2, 2), gap.data());
  CHECK(gap == std::vector<float>{2.5f, 25});

  // y = x W^T + b with W 3x2 (PyTorch's out x in)
  const std::vector<float> x = {1, 2, -1, 0.5f};  // batch 2 x 2 features
  const std::vector<float> w = {1, 0, 0, 1, 1, 1};
  const std::vector<float> b = {0.5f, -0.5f, 0};
  std::vector<float> y(6);
  ops::linear(x.data(), 2, 2, w.data(), b.data(), 3, y.data());
  CHECK(y == std::vector<float>{1.5f, 1.5f, 3, -0.5f, 0, -0.5f});
  ops::linear(x.data(), 2, 2, w.data(), b.data(), 3, y.data(), /*relu=*/true);
  CHECK(y == std::vector<float>{1.5f, 1.5f, 3, 0, 0, 0});

  // Integer-valued data, so every order of summation is exact and the result can be compared
  // exactly: sizes with a batch tail (5 images, tiles of 2), an output tail (7, tiles of 4), whole
  // vectors and a column tail (37 features), with and without a bias.
  {
    const std::int64_t batch = 5, in_features = 37, out_features = 7;
    std::vector<float> xs(batch * in_features), ws(out_features * in_features), bs(out_features);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i * 7 % 11) - 5);
    for (std::size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<float>(static_cast<int>(i * 5 % 9) - 4);
    for (std::size_t i = 0; i < bs.size(); ++i) bs[i] = static_cast<float>(i) - 3;
    for (const bool with_bias : {false, true})
      for (const bool relu : {false, true}) {
        std::vector<float> got(batch * out_features, -1.0f);
        ops::linear(xs.data(), batch, in_features, ws.data(), with_bias ? bs.data() : nullptr, out_features, got.data(),
                    relu);
        for (std::int64_t n = 0; n < batch; ++n)
          for (std::int64_t o = 0; o < out_features; ++o) {
            double want = with_bias ? bs[o] : 0.0;
            for (std::int64_t i = 0; i < in_features; ++i) want += xs[n * in_features + i] * ws[o * in_features + i];
            if (relu) want = std::max(want, 0.0);
            CAPTURE(n);
            CAPTURE(o);
            CHECK(got[n * out_features + o] == static_cast<float>(want));
          }
      }
  }

  std::vector<float> logits = {0, std::log(3.0f), 1000, 1000};  // second row: overflow without max-subtraction
  std::vector<float> p(4);
  ops::softmax(logits.data(), 2, 2, p.data());
  CHECK(p[0] == doctest::Approx(0.25));
  CHECK(p[1] == doctest::Approx(0.75));
  CHECK(p[2] == doctest::Approx(0.5));
  CHECK(p[3] == doctest::Approx(0.5));

  std::vector<float> a = {1, -5, 2}, c = {1, 1, -3}, sum(3);
  ops::add(a.data(), c.data(), sum.data(), 3);
  CHECK(sum == std::vector<float>{2, -4, -1});
  ops::add(a.data(), c.data(), sum.data(), 3, /*relu=*/true);
  CHECK(sum == std::vector<float>{2, 0, 0});
  ops::relu(a.data(), 3);
  CHECK(a == std::vector<float>{1, 0, 2});
}
