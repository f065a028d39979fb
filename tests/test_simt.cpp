// The CPU emulator of CUDA kernels (kernels/simt/): built-ins, barriers, warp ops, atomics, shared
// memory poisoning and the errors it reports, on the small kernels of simt_kernels.cu.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/simt/emulator.hpp"
#include "tests/emulator_test_util.hpp"
#include "tests/simt_kernels.hpp"

using namespace convlab;
using simt::LaunchConfig;

using test::emulator_error;

TEST_CASE("simt: index built-ins over a 3-D grid of 3-D blocks") {
  const LaunchConfig cfg{.grid = {3, 2, 2}, .block = {4, 3, 2}};
  const unsigned threads = 4 * 3 * 2, blocks = 3 * 2 * 2;
  std::vector<unsigned> out(12 * threads * blocks, 999);
  simt::launch(cfg, simt_test::write_indices, out.data());
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      const unsigned* o = &out[12 * (b * threads + t)];
      const std::vector<unsigned> got(o, o + 12);
      const std::vector<unsigned> want = {t % 4, t / 4 % 3, t / 12, b % 3, b / 3 % 2, b / 6, 4, 3, 2, 3, 2, 2};
      REQUIRE(got == want);
    }
}

TEST_CASE("simt: a block reduction in shared memory with barriers in a loop") {
  const int n = 1000;
  std::vector<float> in(n);
  std::iota(in.begin(), in.end(), 1.0f);
  std::vector<float> out(4, -1.0f);
  simt::launch(LaunchConfig{.grid = {4}, .block = {256}}, simt_test::block_sum<256>, in.data(), out.data(), n);
  for (int b = 0; b < 4; ++b) {
    double want = 0;
    for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i) want += in[i];
    CHECK(out[b] == doctest::Approx(want));
  }

  SUBCASE("a 1024-thread block") {
    std::vector<float> ones(1024, 1.0f);
    float sum = 0;
    simt::launch(LaunchConfig{.grid = {1}, .block = {1024}}, simt_test::block_sum<1024>, ones.data(), &sum, 1024);
    CHECK(sum == 1024.0f);
  }
}

TEST_CASE("simt: threads that return leave the barrier") {
  float sum = -1;
  int arrived = -1;
  simt::launch(LaunchConfig{.grid = {1}, .block = {64}}, simt_test::early_exit_sum, &sum, &arrived);
  CHECK(sum == 2016.0f);  // 0 + 1 + ... + 63: every thread wrote before thread 0 read
  CHECK(arrived == 48);   // __syncthreads_count counted the 48 that stayed
}

TEST_CASE("simt: warp shuffles, ballot and broadcast") {
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = static_cast<float>(i % 3 == 0 ? -i : i);
  std::vector<float> down(2), xor_all(64), broadcast(64);
  std::vector<unsigned> ballots(2);
  std::vector<int> scan(64);
  simt::launch(LaunchConfig{.grid = {1}, .block = {64}}, simt_test::warp_ops, in.data(), down.data(), xor_all.data(),
               ballots.data(), scan.data(), broadcast.data());
  for (int w = 0; w < 2; ++w) {
    float sum = 0;
    unsigned ballot = 0;
    int prefix = 0;
    for (int l = 0; l < 32; ++l) {
      const int t = 32 * w + l;
      sum += in[t];
      if (in[t] > 0) ballot |= 1u << l;
      prefix += static_cast<int>(in[t]);
      CHECK(scan[t] == prefix);
      CHECK(broadcast[t] == in[32 * w]);
    }
    CHECK(down[w] == sum);
    CHECK(ballots[w] == ballot);
    for (int l = 0; l < 32; ++l) CHECK(xor_all[32 * w + l] == sum);
  }
}

TEST_CASE("simt: atomics build a histogram") {
  std::vector<int> in(1000);
  for (int i = 0; i < 1000; ++i) in[i] = (i * 7) % 10;
  std::vector<unsigned> bins(10, 0);
  int max_value = -1;
  simt::launch(LaunchConfig{.grid = {3}, .block = {128}}, simt_test::histogram, in.data(), 1000, bins.data(),
               &max_value);
  CHECK(bins == std::vector<unsigned>(10, 100));
  CHECK(max_value == 9);
}

TEST_CASE("simt: float4 loads keep CUDA's layout") {
  static_assert(sizeof(float4) == 16 && alignof(float4) == 16 && alignof(float2) == 8);
  std::vector<float4> in(10), out(10);
  for (int i = 0; i < 10; ++i) in[i] = make_float4(i, -i, 0.5f * i, 2.0f);
  simt::launch(LaunchConfig{.grid = {2}, .block = {8}}, simt_test::scale4, in.data(), out.data(), 3.0f, 10);
  for (int i = 0; i < 10; ++i) {
    CHECK(out[i].x == 3.0f * i);
    CHECK(out[i].y == -3.0f * i);
    CHECK(out[i].z == 1.5f * i);
    CHECK(out[i].w == 6.0f);
  }
}

TEST_CASE("simt: a missing barrier reads poisoned shared memory as NaN") {
  SUBCASE("template, inline-function and dynamic shared memory, in every block") {
    std::vector<float> out(2 * 3 * 64, 0.0f);
    simt::launch(LaunchConfig{.grid = {2}, .block = {64}, .shared_bytes = 64 * sizeof(float)},
                 simt_test::missing_barrier<64>, out.data());
    for (int b = 0; b < 2; ++b) {
      const float* o = &out[3 * 64 * b];
      for (int k = 0; k < 3; ++k) {
        CHECK(std::isnan(o[3 * 0 + k]));         // thread 0 read slot 1 before thread 1 wrote it
        CHECK(o[3 * 63 + k] == float(k + 1));   // thread 63 read slot 0, written long before
      }
    }
  }
  SUBCASE("a non-template kernel") {
    std::vector<float> out(32, 0.0f);
    simt::launch(LaunchConfig{.grid = {1}, .block = {32}}, simt_test::missing_barrier_plain, out.data());
    CHECK(std::isnan(out[0]));
    CHECK(out[31] == 1.0f);
  }
}

TEST_CASE("simt: divergent barriers are an error naming both sites") {
  const std::string msg =
      emulator_error([] { simt::launch(LaunchConfig{.grid = {1}, .block = {64}}, simt_test::divergent_barrier); });
  CHECK(msg.find("barrier divergence") != std::string::npos);
  CHECK(msg.find("simt_kernels.cu:" + std::to_string(simt_test::divergent_line_a)) != std::string::npos);
  CHECK(msg.find("simt_kernels.cu:" + std::to_string(simt_test::divergent_line_b)) != std::string::npos);
  CHECK(msg.find("thread (0,0,0)") != std::string::npos);
  CHECK(msg.find("thread (32,0,0)") != std::string::npos);
  MESSAGE(msg);
}

TEST_CASE("simt: a barrier against a warp shuffle is a deadlock error, not a hang") {
  std::vector<float> out(32);
  const std::string msg = emulator_error(
      [&] { simt::launch(LaunchConfig{.grid = {1}, .block = {32}}, simt_test::warp_barrier_deadlock, out.data()); });
  CHECK(msg.find("deadlock") != std::string::npos);
  CHECK(msg.find("__shfl_down_sync") != std::string::npos);
  CHECK(msg.find("__syncthreads") != std::string::npos);
  MESSAGE(msg);
}

TEST_CASE("simt: an exception in a kernel thread propagates out of launch") {
  int destroyed = 0;
  CHECK_THROWS_WITH_AS(simt::launch(LaunchConfig{.grid = {1}, .block = {64}}, simt_test::throwing_kernel, 5, &destroyed),
                       "kernel thread 5 failed", std::runtime_error);
  CHECK(destroyed == 64);  // the thrower and the 63 fibers unwound from the barrier they waited at

  // The emulator is usable afterwards.
  float sum = 0;
  int arrived = 0;
  simt::launch(LaunchConfig{.grid = {1}, .block = {64}}, simt_test::early_exit_sum, &sum, &arrived);
  CHECK(sum == 2016.0f);
}

TEST_CASE("simt: __dp4a adds four byte products, signed or unsigned, wrapping as the GPU does") {
  const std::vector<int> a{0x7F80FF01, 0x01020304, -1, 0x7FFFFFFF}, b{0x7F80FF01, 0x05060708, -1, 0x02020202},
      c{10, -5, 0x7FFFFFFF, 0};
  std::vector<int> s(4);
  std::vector<unsigned> u(4);
  simt::launch(LaunchConfig{.grid = {1}, .block = {4}}, simt_test::dp4a_values, a.data(), b.data(), c.data(), s.data(),
               u.data());
  CHECK(s[0] == 10 + 127 * 127 + 128 * 128 + 1 + 1);  // bytes 01, FF (-1), 80 (-128), 7F: lowest first
  CHECK(u[0] == 10u + 127 * 127 + 128 * 128 + 255 * 255 + 1);
  CHECK(s[1] == -5 + 4 * 8 + 3 * 7 + 2 * 6 + 1 * 5);
  CHECK(s[2] == static_cast<int>(0x7FFFFFFFu + 4u));  // 4 x (-1 x -1) past INT_MAX wraps
  CHECK(s[3] == 3 * 2 * (-1) + 2 * 127);               // bytes FF, FF, FF, 7F against 02s
}

TEST_CASE("simt: the int8 tensor-core mma computes A B + C with PTX's fragment layout") {
  std::vector<signed char> a(16 * 32), b(8 * 32);
  std::vector<int> c(16 * 8), d(16 * 8, 0);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<signed char>((i * 37 + 11) % 256 - 128);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<signed char>((i * 101 + 7) % 256 - 128);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<int>(i) * 1000 - 60000;
  a[0] = b[0] = -128;  // the extremes multiply exactly
  simt::launch(LaunchConfig{.grid = {1}, .block = {32}}, simt_test::mma_tile, a.data(), b.data(), c.data(), d.data(), 32);
  int wrong = 0;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      int want = c[m * 8 + n];
      for (int k = 0; k < 32; ++k) want += a[m * 32 + k] * b[n * 32 + k];
      wrong += d[m * 8 + n] != want;
    }
  CHECK(wrong == 0);

  // mma.sync is one instruction of the whole warp: a lane that left first is an error, not poison.
  const std::string msg = emulator_error([&] {
    simt::launch(LaunchConfig{.grid = {1}, .block = {32}}, simt_test::mma_tile, a.data(), b.data(), c.data(), d.data(), 31);
  });
  CHECK(msg.find("needs all 32 lanes of the warp: lane 31") != std::string::npos);
  CHECK(msg.find("has returned") != std::string::npos);
  MESSAGE(msg);
  const std::string short_block = emulator_error([&] {
    simt::launch(LaunchConfig{.grid = {1}, .block = {16}}, simt_test::mma_tile, a.data(), b.data(), c.data(), d.data(), 32);
  });
  CHECK(short_block.find("lane 16 of the warp") != std::string::npos);
  CHECK(short_block.find("does not exist (the block has 16 threads)") != std::string::npos);
}

TEST_CASE("simt: bad launch shapes are errors") {
  float out = 0;
  auto launch_with = [&](dim3 grid, dim3 block, unsigned shared = 0) {
    return emulator_error([&] {
      simt::launch(LaunchConfig{.grid = grid, .block = block, .shared_bytes = shared}, simt_test::missing_barrier_plain,
                   &out);
    });
  };
  CHECK(launch_with({0}, {32}).find("grid (0,1,1) has a zero dimension") != std::string::npos);
  CHECK(launch_with({1}, {32, 0}).find("block (32,0,1) has a zero dimension") != std::string::npos);
  CHECK(launch_with({1}, {64, 32}).find("2048 threads") != std::string::npos);
  CHECK(launch_with({1}, {1, 1, 65}).find("exceeds CUDA's limits") != std::string::npos);
  CHECK(launch_with({1, 65536}, {32}).find("exceeds CUDA's limits") != std::string::npos);
  CHECK(launch_with({1}, {32}, 1u << 20).find("shared_bytes 1048576") != std::string::npos);
}

TEST_CASE("simt: a built-in called outside a launch is an error") {
  int out = 0;
  CHECK(emulator_error([&] { simt_test::barrier_loop(1, &out); }) ==
        "simt: __syncthreads called outside a kernel run by simt::launch");
}

TEST_CASE("simt: stacks are reused across launches and blocks") {
  std::vector<float> ones(1024, 1.0f);
  float sum = 0;
  simt::launch(LaunchConfig{.grid = {1}, .block = {1024}}, simt_test::block_sum<1024>, ones.data(), &sum, 1024);
  const simt::Stats before = simt::stats();
  std::vector<float> sums(3);
  for (int i = 0; i < 50; ++i) {
    simt::launch(LaunchConfig{.grid = {2}, .block = {1024}}, simt_test::block_sum<1024>, ones.data(), sums.data(), 1024);
    simt::launch(LaunchConfig{.grid = {3}, .block = {256}}, simt_test::block_sum<256>, ones.data(), sums.data(), 768);
  }
  CHECK(sums == std::vector<float>{256, 256, 256});
  const simt::Stats after = simt::stats();
  CHECK(after.stacks_allocated == before.stacks_allocated);
  CHECK(after.stacks_allocated >= 1024);
  CHECK(after.launches - before.launches == 100);
  CHECK(after.blocks - before.blocks == 250);
  CHECK(after.threads - before.threads == 50 * (2 * 1024 + 3 * 256));
}

TEST_CASE("simt: context switches per second (informational)") {
  int iterations_done = 0;
  const simt::Stats before = simt::stats();
  const auto start = std::chrono::steady_clock::now();
  simt::launch(LaunchConfig{.grid = {4}, .block = {256}}, simt_test::barrier_loop, 500, &iterations_done);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const simt::Stats after = simt::stats();
  CHECK(iterations_done == 500);
  const double switches = static_cast<double>(after.context_switches - before.context_switches);
  MESSAGE("simt: " << switches << " context switches in " << seconds << " s: " << switches / seconds / 1e6
                   << " million per second");
}
