// Int8: the requantisation arithmetic (kernels/common/quantize.hpp), the oracle on hand-computed
// cases, and every int8 kernel against the oracle, byte for byte, on labelled and random shapes.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/harness/int8_conv_data.hpp"
#include "bench/harness/peak.hpp"
#include "cli_test_util.hpp"
#include "conv_test_util.hpp"
#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/int8_direct_vnni.hpp"
#include "kernels/cpu/int8_simd.hpp"
#include "kernels/cpu/ops.hpp"
#include "kernels/gpu/gpu_conv.hpp"

using namespace convlab;
namespace fs = std::filesystem;

namespace {

// One run of a planned int8 kernel on `input`, its workspace its own.
std::vector<std::uint8_t> run_planned(const PlannedInt8Conv& planned, const ConvProblem& p,
                                      const std::vector<std::uint8_t>& input) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(p.output_elems()), 0xA5);  // not a plausible result
  const auto workspace = aligned_floats(planned.workspace_bytes() / sizeof(float) + 1);
  planned.run(input.data(), out.data(), workspace.get());
  return out;
}

std::vector<std::uint8_t> run_int8(const Int8KernelInfo& kernel, const ConvProblem& p, const Int8ConvWeights& w,
                                   const std::vector<std::uint8_t>& input, Activation activation = Activation::none) {
  return run_planned(*kernel.plan(p, w, Epilogue{activation}), p, input);
}

const Int8KernelInfo& oracle() { return *find_int8_kernel("cpu.20_int8_reference"); }

// The labelled shapes every int8 kernel meets, by role.
std::vector<ConvProblem> labelled_problems() {
  std::vector<ConvProblem> problems;
  for (const char* d : {"mb2ic3ih32oc16oh32kh3ph1 first layer", "mb1ic64ih8oc64oh8kh3ph1 deep 3x3",
                        "mb2ic32ih16oc64oh8kh3sh2ph1 stride 2", "mb1ic16ih16oc24oh16kh1 pointwise",
                        "mb1ic5ih9iw7oc19oh5ow3kh5kw5dh1ph2 dilated odd", "mb1ic8ih8oc8oh8kh3ph1g8 depthwise",
                        "mb2ic48ih9oc80oh5kh3sh2ph1 channels past one tile, taps past one step",
                        "mb1ic8ih70iw3oc8oh70ow3kh1 pixels past one tile",
                        "mb1ic8ih31oc8oh31kh3ph1 two bands of rows, the last one row shorter (cpu.24)",
                        "mb2ic8ih7iw8oc12oh7ow8kh3ph1 8 columns, odd rows (cpu.24's two-row vectors, the last one row)",
                        "mb2ic16ih17iw33oc24kh1sh2sw2 shortcut 1x1 stride 2, odd sizes (cpu.24 packs every other row)",
                        "mb1ic8ih12oc8kh1sh3sw1 1x1 stride 3 down, 1 across",
                        "g16mb2ic16ih16oc16oh8kh3sh2ph1 depthwise stride 2 to 8 columns (cpu.25 in registers)",
                        "g4mb1ic4ih16oc4oh16kh5ph2 depthwise 5x5 on 16 columns: two quads per kernel row",
                        "g8mb3ic8ih9iw70oc8oh5ow35kh3sh2ph1 depthwise stride 2 to 35 columns (cpu.25's row segments)",
                        "g4mb1ic4ih11iw80oc4kh3kw5sh2sw2dw2ph1pw4 depthwise, row segments: 5 dilated taps, pad 4",
                        "g4mb2ic4ih9iw40oc4kh3sh2sw1ph1 depthwise, rows strided, columns not (row segments)",
                        "g8mb3ic8ih9iw8oc8oh9ow8kh3ph1 depthwise, odd rows: a last vector half past the plane; a thread's planes across images",
                        "g8mb3ic8ih7iw8oc8oh7ow8kh3ph1 depthwise, 56 bytes a plane (cpu.25's plane in a register), three images",
                        "mb3ic70ih1oc21oh1kh1 linear: channels past a quad, outputs past a block, images past n",
                        "mb9ic64ih1oc70oh1kh1 linear: a last tile of blocks partly past K (cpu.26)",
                        "mb2ic300ih1oc250oh1kh1 linear shared between threads (cpu.26's weights over 64 KiB)"})
    problems.push_back(parse_problem(std::string_view(d).substr(0, std::string_view(d).find(' '))));
  return problems;
}

// A GPU int8 kernel through GpuInt8Conv on `rt`: the input's bytes uploaded, the output's brought back.
std::vector<std::uint8_t> run_int8_on_gpu(gpu::GpuRuntime& rt, const Int8KernelInfo& kernel, const ConvProblem& p,
                                          const Int8ConvWeights& w, const std::vector<std::uint8_t>& input,
                                          Activation activation) {
  const gpu::GpuInt8Conv conv(rt, kernel.id, p, w, Epilogue{activation});
  const gpu::DeviceBuffer in = gpu::DeviceBuffer::of_bytes(rt, input.size());
  const auto out_bytes = static_cast<std::size_t>(p.output_elems());
  const gpu::DeviceBuffer out = gpu::DeviceBuffer::of_bytes(rt, out_bytes);
  rt.upload_bytes(in.data(), input.data(), input.size());
  conv.run(reinterpret_cast<const std::uint8_t*>(in.data()), reinterpret_cast<std::uint8_t*>(out.data()));
  std::vector<std::uint8_t> result(out_bytes);
  rt.download_bytes(result.data(), out.data(), out_bytes);
  return result;
}

// Outputs of `got` that are not the oracle's bytes.
std::size_t bytes_off(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want) {
  std::size_t off = got.size() == want.size() ? 0 : want.size();
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) off += got[i] != want[i];
  return off;
}

}  // namespace

TEST_CASE("int8 requantisation: rounds half to even, saturates, clamps ReLU and ReLU6 in the quantised domain") {
  Requantization r{.multiplier = {0.5f}, .offset = {0.0f}, .zero_point = 10};
  CHECK(r(5, 0) == 12);   // 2.5 -> 2 (even), + 10
  CHECK(r(7, 0) == 14);   // 3.5 -> 4
  CHECK(r(-5, 0) == 8);   // -2.5 -> -2
  CHECK(r(600, 0) == 255);  // 300 + 10 saturates, never wraps to 54
  CHECK(r(-100, 0) == 0);
  r.multiplier[0] = 1e30f;  // far beyond int32: clamped before the conversion, still saturates
  CHECK(r(7, 0) == 255);
  CHECK(r(-7, 0) == 0);

  const std::vector<std::int8_t> weight{1};
  const std::vector<float> scale{1.0f}, bias{};
  Int8ConvWeights w{weight, scale, bias, {.scale = 1.0f, .zero_point = 0}, {.scale = 0.25f, .zero_point = 20}};
  const Requantization relu = make_requantization(w, 1, Activation::relu);
  CHECK(relu.lo == 20);  // the real 0
  CHECK(relu.hi == 255);
  const Requantization relu6 = make_requantization(w, 1, Activation::relu6);
  CHECK(relu6.hi == 20 + 24);  // 6 / 0.25 quanta above the zero point
  CHECK(relu6(100, 0) == 44);
  w.output.zero_point = 250;
  CHECK(make_requantization(w, 1, Activation::relu6).hi == 255);  // saturates there first
}

TEST_CASE("int8 requantisation: the vector forms give requantize_one's values: ties, saturation, ReLU and ReLU6 bounds") {
  namespace int8 = cpu::int8;
  // Accumulators whose products land on halves (multiplier 0.5, 0.25), far past the bounds both
  // ways (int32's ends, a multiplier of 1e30), and random ones; bounds of no activation, ReLU (lo
  // at the zero point) and ReLU6 (hi below 255), with zero points at both ends of the range.
  std::vector<std::int32_t> accs{0, 1, -1, 2147483647, -2147483647 - 1};
  for (std::int32_t a = -1100; a <= 1100; ++a) accs.push_back(a);
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int32_t> any(-2000000, 2000000);
  for (int i = 0; i < 2000; ++i) accs.push_back(any(rng));
  while (accs.size() % int8::kLanes != 0) accs.push_back(any(rng));
  struct Case { float m, o; std::int32_t zp, lo, hi; };
  for (const Case c : {Case{0.5f, 0.0f, 10, 0, 255}, Case{0.25f, 0.5f, 128, 128, 255}, Case{0.5f, -3.0f, 0, 0, 255},
                       Case{0.37f, 7.25f, 255, 0, 255}, Case{0.5f, 0.0f, 20, 20, 44}, Case{1e30f, 0.0f, 3, 0, 255},
                       Case{1e-4f, 0.49999997f, 100, 0, 255}}) {
    CAPTURE(c.m);
    CAPTURE(c.zp);
    const int8::IVec zp = int8::splat(c.zp), lo = int8::splat(c.lo), hi = int8::splat(c.hi);
    const std::vector<float> m(int8::kLanes, c.m), o(int8::kLanes, c.o);
    std::size_t channel_off = 0, lanes_off = 0;
    for (std::size_t i = 0; i < accs.size(); i += int8::kLanes) {
      std::int32_t by_channel[int8::kLanes], by_lane[int8::kLanes];
      const int8::IVec acc = int8::load(&accs[i]);
      int8::store(by_channel, int8::requantize_channel(acc, c.m, c.o, zp, lo, hi));
      int8::requantize(acc, m.data(), o.data(), zp, lo, hi, by_lane);
      for (int l = 0; l < int8::kLanes; ++l) {
        const std::int32_t want = requantize_one(accs[i + static_cast<std::size_t>(l)], c.m, c.o, c.zp, c.lo, c.hi);
        channel_off += by_channel[l] != want;
        lanes_off += by_lane[l] != want;
      }
    }
    CHECK(channel_off == 0);
    CHECK(lanes_off == 0);
  }
}

TEST_CASE("int8 quantize: PyTorch's quantize_per_tensor, saturating, NaN to 0") {
  const QuantParams q{.scale = 0.5f, .zero_point = 100};
  CHECK(quantize_u8(1.25f, q) == 102);  // 2.5 -> 2
  CHECK(quantize_u8(1.75f, q) == 104);  // 3.5 -> 4
  CHECK(quantize_u8(1e9f, q) == 255);
  CHECK(quantize_u8(-1e9f, q) == 0);
  CHECK(quantize_u8(std::numeric_limits<float>::quiet_NaN(), q) == 0);
  CHECK(dequantize(104, q) == 2.0f);
}

TEST_CASE("int8 quantize: ops::quantize's vectors give quantize_u8's bytes, halves, extremes and NaN included") {
  std::vector<float> x;
  for (int i = -700; i <= 700; ++i) x.push_back(0.25f * static_cast<float>(i));  // every half step, both signs
  for (const float v : {1e9f, -1e9f, 511.9f, -511.9f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    x.push_back(v);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 40.0f);
  for (int i = 0; i < 5000; ++i) x.push_back(normal(rng));
  for (const QuantParams q : {QuantParams{.scale = 0.5f, .zero_point = 100}, QuantParams{.scale = 0.0371f, .zero_point = 0},
                              QuantParams{.scale = 1.7f, .zero_point = 255}}) {
    std::vector<std::uint8_t> got(x.size());
    ops::quantize(x.data(), got.data(), static_cast<std::int64_t>(x.size()), q);
    std::size_t off = 0;
    for (std::size_t i = 0; i < x.size(); ++i) off += got[i] != quantize_u8(x[i], q);
    CHECK(off == 0);
  }
}

TEST_CASE("int8 add: ops::add_u8's vectors give AddRequant's bytes, with and without ReLU, ties and saturation included") {
  // Every pair of bytes (65536, not a multiple of any vector) and scales whose sums land on
  // halves (0.5 exactly) or saturate (16), for each output zero point's end.
  std::vector<std::uint8_t> a, b;
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 256; ++j) a.push_back(static_cast<std::uint8_t>(i)), b.push_back(static_cast<std::uint8_t>(j));
  a.push_back(7), b.push_back(250);  // one more: a scalar tail
  const QuantParams half{.scale = 0.5f, .zero_point = 128}, odd{.scale = 0.0371f, .zero_point = 3};
  for (const auto& [qa, qb, qout] : {std::tuple{half, half, QuantParams{.scale = 1.0f, .zero_point = 0}},
                                     std::tuple{odd, half, QuantParams{.scale = 0.05f, .zero_point = 255}},
                                     std::tuple{half, odd, QuantParams{.scale = 0.03125f, .zero_point = 90}}})
    for (const bool relu : {false, true}) {
      const AddRequant rq(qa, qb, qout, relu);
      std::vector<std::uint8_t> got(a.size());
      ops::add_u8(a.data(), qa, b.data(), qb, got.data(), qout, static_cast<std::int64_t>(a.size()), relu);
      std::size_t off = 0, saturated = 0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        off += got[i] != rq(a[i], b[i]);
        saturated += got[i] == 255 || got[i] == 0;
      }
      CHECK(off == 0);
      CHECK(saturated > 0);
      CHECK(rq(a[0], b[0]) >= (relu ? qout.zero_point : 0));
    }
  // Half to even: (0.5 * (129 - 128) + 0.5 * (128 - 128)) / 1 = 0.5 -> 0; 1.5 -> 2.
  const AddRequant tie(half, half, QuantParams{.scale = 1.0f, .zero_point = 10}, false);
  CHECK(tie(129, 128) == 10);
  CHECK(tie(131, 128) == 12);
}

TEST_CASE("int8 weights: bad scales, zero points and sizes are refused by name") {
  const ConvProblem p = parse_problem("mb1ic2ih4oc2oh4kh1");
  const std::vector<std::int8_t> weight(4, 1);
  std::vector<float> scale{0.1f, 0.2f}, bias{0.0f, 1.0f};
  Int8ConvWeights w{weight, scale, bias, {.scale = 0.1f, .zero_point = 3}, {.scale = 0.1f, .zero_point = 3}};
  CHECK_NOTHROW(check_int8_weights(p, w));
  auto refused = [&](Int8ConvWeights bad, const char* what) {
    CHECK_THROWS_WITH_AS(check_int8_weights(p, bad), doctest::Contains(what), InputError);
  };
  Int8ConvWeights bad = w;
  bad.input.zero_point = 256;
  refused(bad, "input quantisation: zero point 256");
  bad = w;
  bad.output.scale = 0;
  refused(bad, "output quantisation: scale 0");
  std::vector<float> negative{0.1f, -0.2f};
  bad = w;
  bad.weight_scale = negative;
  refused(bad, "weight_scale[1] = -0.2");
  bad = w;
  bad.weight_scale = std::span(scale).first(1);
  refused(bad, "weight_scale has 1 values");
  bad = w;
  bad.weight = std::span(weight).first(3);
  refused(bad, "int8 weight has 3 values");
  std::vector<float> nan_bias{0.0f, std::numeric_limits<float>::quiet_NaN()};
  bad = w;
  bad.bias = nan_bias;
  refused(bad, "bias[1]");
  CHECK_THROWS_WITH_AS(check_int8_weights(parse_problem("mb1ic8000ih4oc1oh2kh3"), w),
                       doctest::Contains("could overflow the int32 accumulator"), InputError);
}

TEST_CASE("cpu.20_int8_reference: a hand-computed 3x3 convolution with padding, zero points and bias") {
  // One 2x2 input channel, zero point 3, so real values (x - 3) = {1, -1; 2, 0}; one 3x3 filter of
  // ones but a -2 at the centre; padding 1; output scale 0.5, zero point 100, bias 1.5 (3 quanta).
  const ConvProblem p = parse_problem("mb1ic1ih2oc1oh2kh3ph1");
  const std::vector<std::uint8_t> input{4, 2, 5, 3};
  const std::vector<std::int8_t> weight{1, 1, 1, 1, -2, 1, 1, 1, 1};
  const std::vector<float> scale{1.0f}, bias{1.5f};
  const Int8ConvWeights w{weight, scale, bias, {.scale = 1.0f, .zero_point = 3}, {.scale = 0.5f, .zero_point = 100}};
  // Every output's window covers the whole image: it sums the four inputs (2) and takes three times
  // its own away (the centre weight is -2, not 1): y = {-1, 5; -4, 2}. Requantised: 100 + (y + 1.5) / 0.5.
  CHECK(run_int8(oracle(), p, w, input) == std::vector<std::uint8_t>{101, 113, 95, 107});
  CHECK(run_int8(oracle(), p, w, input, Activation::relu) == std::vector<std::uint8_t>{101, 113, 100, 107});
}

TEST_CASE("int8 kernels: every CPU one gives the oracle's bytes on labelled and random shapes, every activation") {
  std::vector<ConvProblem> problems = labelled_problems();
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 60; ++i) {  // every stride, padding, dilation; odd channels; K across blocks
    ConvProblem p;
    p.n = pick(1, 2), p.c = pick(1, 20), p.k = pick(1, 40), p.h = pick(1, 13), p.w = pick(1, 13);
    p.r = pick(1, 4), p.s = pick(1, 4), p.stride_h = pick(1, 3), p.stride_w = pick(1, 3);
    p.dilation_h = pick(1, 2), p.dilation_w = pick(1, 2), p.pad_h = pick(0, 2), p.pad_w = pick(0, 2);
    if (i % 3 == 0) p.groups = p.k = p.c;  // depthwise
    if ((p.r - 1) * p.dilation_h + 1 > p.h + 2 * p.pad_h || (p.s - 1) * p.dilation_w + 1 > p.w + 2 * p.pad_w) continue;
    problems.push_back(p);
  }
  std::map<std::string_view, int> compared;  // per kernel
  for (const ConvProblem& p : problems)
    for (const bool full_range : {false, true}) {
      const Int8ConvData data = make_int8_conv_data(p, 7, full_range);
      for (const Activation a : {Activation::none, Activation::relu, Activation::relu6}) {
        const std::vector<std::uint8_t> expected = run_int8(oracle(), p, data.weights(), data.input, a);
        for (const Int8KernelInfo& k : all_int8_kernels()) {
          // Libraries may saturate u8 x s8 pair sums without VNNI (int8_conv_data.hpp): 7 bits only.
          if (k.backend != Backend::cpu || !k.supports(p) || k.id == oracle().id || (full_range && k.baseline)) continue;
          CAPTURE(k.id);
          CAPTURE(to_string(p));
          CAPTURE(to_string(a));
          CAPTURE(full_range);
          const std::vector<std::uint8_t> got = run_int8(k, p, data.weights(), data.input, a);
          int worst = 0;
          for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(int{got[i]} - int{expected[i]}));
          CHECK(worst <= k.max_quanta);
          ++compared[k.id];
        }
      }
    }
  CHECK(compared["cpu.21_int8_direct_madd"] > 200);
  CHECK(compared["cpu.22_int8_depthwise"] > 60);
  CHECK(compared["cpu.25_int8_depthwise_rows"] > 60);
  CHECK(compared["cpu.23_int8_direct_vnni"] > 200);
  CHECK(compared["cpu.24_int8_direct_rows"] > 200);
  CHECK(compared["cpu.26_int8_linear"] >= 18);
}

TEST_CASE("int8 kernels: the seven-bit path is taken only where it is exact: one input byte over 127 anywhere sends a run to the exact path") {
  // Weights of 127 and inputs of 127 (zero point 0): every u8 x s8 pair sums to 32258, within
  // int16. One input byte of 255 makes its pairs 48514: vpmaddubsw would saturate them to 32767,
  // 2.6 output quanta below the oracle on the dense layer, 21 on the depthwise one.
  for (const char* descriptor : {"mb2ic8ih9oc16oh9kh3ph1", "g8mb2ic8ih9oc8oh9kh3ph1", "mb1ic16ih9oc16oh9kh1"}) {
    const ConvProblem p = parse_problem(descriptor);
    Int8ConvData d = make_int8_conv_data(p, 1);
    std::ranges::fill(d.weight, std::int8_t{127});
    std::ranges::fill(d.weight_scale, 1.0f / 127);
    std::ranges::fill(d.bias, 0.0f);
    d.input_q = {.scale = 1.0f / 64, .zero_point = 0};
    const double largest = static_cast<double>(p.c_per_group() * p.r * p.s) * 127 * 127;
    d.output_q = {.scale = static_cast<float>(largest / (64 * 127) / 200), .zero_point = 0};
    for (const std::int64_t at : {std::int64_t{0}, p.input_elems() / 2 + 3, p.input_elems() - 1}) {
      std::ranges::fill(d.input, std::uint8_t{127});
      d.input[static_cast<std::size_t>(at)] = 255;
      const std::vector<std::uint8_t> want = run_int8(oracle(), p, d.weights(), d.input);
      for (const Int8KernelInfo& k : all_int8_kernels()) {
        if (k.backend != Backend::cpu || k.baseline || !k.supports(p) || k.id == oracle().id) continue;
        CAPTURE(k.id);
        CAPTURE(descriptor);
        CAPTURE(at);
        CHECK(bytes_off(run_int8(k, p, d.weights(), d.input), want) == 0);
      }
    }
  }
}

TEST_CASE("int8 seven-bit check: any byte over 127, or a zero point over 127, says no; only where the build has the path") {
  for (const std::int64_t count : {std::int64_t{1}, std::int64_t{31}, std::int64_t{4097}, std::int64_t{(1 << 20) + 5}}) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count), 127);
    CAPTURE(count);
    CHECK(cpu::int8::seven_bit_input(bytes.data(), count, 0) == cpu::int8::kSevenBitPath);
    CHECK_FALSE(cpu::int8::seven_bit_input(bytes.data(), count, 128));
    for (const std::int64_t at : {std::int64_t{0}, count / 2, count - 1}) {
      bytes[static_cast<std::size_t>(at)] = 128;
      CHECK_FALSE(cpu::int8::seven_bit_input(bytes.data(), count, 0));
      bytes[static_cast<std::size_t>(at)] = 127;
    }
  }
}

TEST_CASE("int8 kernels: every CUDA one gives the oracle's bytes on the labelled shapes and 300 random problems, wherever it runs") {
  std::vector<test::Executor> where;
  for (const test::Executor& e : test::gpu_runtimes())
    if (e.backend == Backend::cuda) where.push_back(e);
  std::size_t kernels = 0;
  for (const Int8KernelInfo& k : all_int8_kernels()) {
    if (k.backend != Backend::cuda) continue;
    ++kernels;
    for (const test::Executor& e : where) {
      std::size_t labelled = 0, random = 0, drawn = 0;
      const auto check = [&](const ConvProblem& p, std::uint64_t seed) {
        const bool full_range = seed % 2 == 0;  // 8-bit inputs half the time, 7-bit the other
        const Int8ConvData data = make_int8_conv_data(p, seed, full_range);
        const auto activation = static_cast<Activation>(seed % 3);
        CAPTURE(k.id);
        CAPTURE(e.name);
        CAPTURE(to_string(p));
        CAPTURE(to_string(activation));
        const std::vector<std::uint8_t> want = run_int8(oracle(), p, data.weights(), data.input, activation);
        CHECK(bytes_off(run_int8_on_gpu(*e.gpu, k, p, data.weights(), data.input, activation), want) == 0);
      };
      for (const ConvProblem& p : labelled_problems())
        if (k.supports(p)) check(p, 3 + labelled++);
      std::mt19937 rng(2027);
      while (random < test::sweep_size() && drawn < 100 * test::sweep_size()) {
        const ConvProblem p = test::random_problem(rng);
        ++drawn;
        if (k.supports(p)) check(p, 1000 + random++);
      }
      std::printf("%-22s %-9s %zu labelled, %zu random problems\n", std::string(k.id).c_str(), e.name, labelled, random);
      CHECK(labelled >= 6);
      CHECK(random == test::sweep_size());
    }
  }
  CHECK(kernels == 3);  // cuda.20 (__dp4a), cuda.21 (mma.sync), cuda.22 (direct, every group count)
}

TEST_CASE("int8 kernels: cpu.24 and cpu.25 refuse the layers of the other, by name") {
  const ConvProblem dense = parse_problem("mb1ic8ih8oc8oh8kh3ph1"), depthwise = parse_problem("g8mb1ic8ih8oc8oh8kh3ph1");
  const Int8KernelInfo& rows = *find_int8_kernel("cpu.24_int8_direct_rows");
  const Int8KernelInfo& dw = *find_int8_kernel("cpu.25_int8_depthwise_rows");
  CHECK(rows.unsupported(depthwise) == "groups 1 only, got g8 (depthwise int8 is cpu.22 and cpu.25)");
  CHECK(dw.unsupported(dense) == "depthwise only (groups = C = K), got g1 C 8 K 8");
  CHECK(dw.unsupported(parse_problem("g4mb1ic8ih8oc8oh8kh3ph1")) == "depthwise only (groups = C = K), got g4 C 8 K 8");
  CHECK(rows.supports(dense));
  CHECK(dw.supports(depthwise));
  // Plan refuses too, naming the kernel and the problem, rather than computing garbage.
  const Int8ConvData dense_data = make_int8_conv_data(dense, 1), depthwise_data = make_int8_conv_data(depthwise, 1);
  CHECK_THROWS_WITH_AS(rows.plan(depthwise, depthwise_data.weights(), Epilogue{}),
                       doctest::Contains("cpu.24_int8_direct_rows cannot run g8mb1ic8ih8oc8oh8kh3ph1"), InputError);
  CHECK_THROWS_WITH_AS(dw.plan(dense, dense_data.weights(), Epilogue{}),
                       doctest::Contains("cpu.25_int8_depthwise_rows cannot run mb1ic8ih8oc8oh8kh3ph1"), InputError);
}

TEST_CASE("int8 kernels: cpu.26 runs linear layers only, and refuses others by name") {
  const Int8KernelInfo& linear = *find_int8_kernel("cpu.26_int8_linear");
  CHECK(linear.supports(parse_problem("mb32ic64ih1oc10oh1kh1")));
  for (const char* other : {"mb1ic8ih2oc8oh2kh1", "mb1ic8ih1oc8oh3kh1ph1", "g2mb1ic8ih1oc8oh1kh1"}) {
    CAPTURE(other);
    CHECK(linear.unsupported(parse_problem(other)) ==
          "a linear layer only (a 1 x 1 convolution of a 1 x 1 map, groups 1, no padding)");
  }
  const ConvProblem dense = parse_problem("mb1ic8ih8oc8oh8kh3ph1");
  CHECK_THROWS_WITH_AS(linear.plan(dense, make_int8_conv_data(dense, 1).weights(), Epilogue{}),
                       doctest::Contains("cpu.26_int8_linear cannot run mb1ic8ih8oc8oh8kh3ph1"), InputError);
}

TEST_CASE("cpu.23: every register tile gives the oracle's bytes: K of one block to several groups, pixels past a tile") {
  // Plan measures which tile is fastest, so a test cannot count on reaching each through it.
  for (const char* descriptor : {"mb2ic20ih7oc16oh7kh3ph1", "mb1ic8ih9oc48oh9kh1", "mb2ic12ih7oc100oh7kh3ph1",
                                 "mb1ic36ih15iw11oc70oh8ow6kh3sh2ph1"}) {
    const ConvProblem p = parse_problem(descriptor);
    for (const bool full_range : {false, true}) {
      const Int8ConvData data = make_int8_conv_data(p, 5, full_range);
      const std::vector<std::uint8_t> expected = run_int8(oracle(), p, data.weights(), data.input, Activation::relu);
      for (const cpu::VnniTile tile : cpu::int8_direct_vnni_tiles()) {
        CAPTURE(descriptor);
        CAPTURE(tile.k_blocks);
        CAPTURE(tile.pixels);
        CAPTURE(full_range);
        const auto planned = cpu::int8_direct_vnni_plan_as(p, data.weights(), Epilogue{Activation::relu}, tile);
        CHECK(bytes_off(run_planned(*planned, p, data.input), expected) == 0);
      }
    }
  }
  const ConvProblem p = parse_problem("mb1ic8ih8oc8oh8kh3ph1");
  CHECK_THROWS_WITH_AS(cpu::int8_direct_vnni_plan_as(p, make_int8_conv_data(p, 1).weights(), Epilogue{}, {5, 5}),
                       "cpu.23_int8_direct_vnni: no 5 x 5 register tile in this build", InputError);
}

TEST_CASE("cpu.23: on large layers plan times its register tiles and names the one it keeps; not on tiny layers") {
  const Int8KernelInfo& vnni = *find_int8_kernel("cpu.23_int8_direct_vnni");
  // 29 MOP per image, K of 8 blocks (AVX-512) or 16 (8-lane vectors): tiles of two block counts.
  const ConvProblem p = parse_problem("mb1ic64ih14oc128oh14kh3ph1");
  const Int8ConvData data = make_int8_conv_data(p, 3);
  const auto planned = vnni.plan(p, data.weights(), Epilogue{});
  const std::string why = planned->explain();
  CAPTURE(why);
  CHECK(why.starts_with("register tile "));
  CHECK(why.find("interleaved rounds on 1 image(s)") != std::string::npos);
  int named = 0;
  for (const cpu::VnniTile tile : cpu::int8_direct_vnni_tiles())
    named += why.find(fmt::format("{} x {} ", tile.k_blocks, tile.pixels)) != std::string::npos;
  CHECK(named >= 2);
  // Whichever tile won, the output is the oracle's (the test above checks every tile).
  CHECK(bytes_off(run_planned(*planned, p, data.input), run_int8(oracle(), p, data.weights(), data.input)) == 0);
  // 0.15 MOP: a few microseconds a run, the first tile unmeasured.
  const ConvProblem tiny = parse_problem("mb1ic8ih4oc64oh4kh3ph1");
  CHECK(vnni.plan(tiny, make_int8_conv_data(tiny, 3).weights(), Epilogue{})->explain().empty());
}

TEST_CASE("int8 kernels: a CUDA one refuses what it cannot run, by name") {
  const Int8KernelInfo& dp4a = *find_int8_kernel("cuda.20_int8_dp4a");
  CHECK(dp4a.unsupported(parse_problem("g8mb1ic8ih8oc8oh8kh3ph1")) == "groups > 1");
  const ConvProblem p = parse_problem("mb1ic8ih8oc8oh8kh3ph1");
  const Int8ConvData data = make_int8_conv_data(p, 1);
  CHECK_THROWS_WITH_AS(gpu::GpuInt8Conv(test::emulator(), "cuda.20_int8_dp4a", parse_problem("g8mb1ic8ih8oc8oh8kh3ph1"),
                                        data.weights(), Epilogue{}),
                       doctest::Contains("does not support"), InputError);
  CHECK_THROWS_WITH_AS(gpu::GpuInt8Conv(test::emulator(), "cuda.02_implicit_gemm", p, data.weights(), Epilogue{}),
                       doctest::Contains("'cuda.02_implicit_gemm' is not a CUDA int8 kernel"), InputError);
#ifdef CONVLAB_WITH_METAL_EMULATOR  // a backend without int8 kernels says so
  CHECK_THROWS_WITH_AS(gpu::GpuInt8Conv(test::metal_emulator(), "cuda.20_int8_dp4a", p, data.weights(), Epilogue{}),
                       doctest::Contains("has no int8 kernels"), InputError);
#endif
}

TEST_CASE("int8 data: outputs spread over the quantised range, so matching the oracle means something") {
  const ConvProblem p = parse_problem("mb1ic32ih16oc32oh16kh3ph1");
  CHECK(std::ranges::max(make_int8_conv_data(p, 1).input) == 127);  // 7 bits unless full range
  CHECK(std::ranges::max(make_int8_conv_data(p, 1, true).input) == 255);
  const Int8ConvData data = make_int8_conv_data(p, 1);
  const std::vector<std::uint8_t> out = run_int8(oracle(), p, data.weights(), data.input);
  const std::set<std::uint8_t> levels(out.begin(), out.end());
  CHECK(levels.size() > 100);
  const auto saturated = std::ranges::count_if(out, [](std::uint8_t q) { return q == 0 || q == 255; });
  CHECK(saturated < static_cast<std::ptrdiff_t>(out.size() / 100));
  // A flipped weight moves outputs: the comparison above would see a kernel that got it wrong.
  Int8ConvData flipped = data;
  flipped.weight[5] = static_cast<std::int8_t>(-flipped.weight[5] - 1);
  CHECK(run_int8(oracle(), p, flipped.weights(), flipped.input) != out);
}

TEST_CASE("cli: conv --precision int8 times the int8 kernels beside oneDNN's, each checked against the int8 oracle") {
  const fs::path json = test::scratch() / "int8.json";
  const test::Outcome o = test::run_convlab("conv --precision int8 --problem mb1ic8ih9oc20oh9kh3ph1 --warmup 1 --trials 3 "
                                            "--interleave --json " + json.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("checked against cpu.20_int8_reference (in quanta of the output scale)") != std::string::npos);
  CHECK(o.out.find("GOP/s") != std::string::npos);
  // Its inputs use 7 bits: where that makes our kernels take a faster path, the user is told so.
  CHECK(o.out.find("int8: seeded quint8 input over 7 bits") != std::string::npos);
  CHECK((o.out.find("take their seven-bit path on such inputs") != std::string::npos) == cpu_int8_seven_bit_path());
  CHECK(cpu_int8_seven_bit_path() == cpu::int8::kSevenBitPath);
  const auto doc = nlohmann::json::parse(test::slurp(json));
  // The int8 probe is measured again after the rows, as the FMA one, where this ISA has one.
  CHECK(doc["context"]["peak"].contains("int8_gops_all_threads_after") == doc["context"]["peak"].contains("int8_gops_all_threads"));
  std::set<std::string> kernels;
  for (const auto& r : doc["results"]) {
    kernels.insert(r["kernel"].get<std::string>());
    CHECK(r["precision"] == "int8");
    CHECK(r["status"] == "ok");
    // A share of the int8 peak where this ISA has an int8 probe, never of the FP32 FMA peak.
    CHECK(r.contains("percent_of_peak") == doc["context"]["peak"].contains("int8_gops_all_threads"));
    CHECK(r["error_vs_reference"]["max_abs"].get<double>() <= 1);
  }
  CHECK(kernels.contains("cpu.20_int8_reference"));
  CHECK(kernels.contains("cpu.21_int8_direct_madd"));
#ifdef CONVLAB_WITH_ONEDNN
  CHECK(kernels.contains("onednn.conv_int8"));
  CHECK(o.out.find("best of ours vs onednn.conv_int8") != std::string::npos);
#endif
  test::check_usage_error("conv --precision int4 --problem mb1ic8ih9oc8oh9kh3", "--precision: 'int4' is not one of fp32, int8");
  test::check_usage_error("conv --precision int8 --problem mb1ic8ih9oc8oh9kh3 --kernel cpu.02_direct_xsimd",
                          "--kernel: 'cpu.02_direct_xsimd' is not an int8 kernel of cpu");
}

TEST_CASE("cli: run --precision fp32,int8 times both in one run and says what int8 changed: size, speed, predictions") {
  const fs::path json = test::scratch() / "run-int8.json";
  const test::Outcome o = test::run_convlab(
      "run --model resnet8 --precision fp32,int8 --kernel cpu.01_im2col_eigen,cpu.21_int8_direct_madd --batch 1,2 "
      "--warmup 0 --trials 2 --calibration 4 --eval-inputs 8 --json " + json.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("int8 vs fp32: parameters 303.5 KiB -> 78.2 KiB") != std::string::npos);
  CHECK(o.out.find("of 8 inputs") != std::string::npos);
  CHECK(o.out.find("SQNR per layer (dB; under 20 flagged LOW): conv1 ") != std::string::npos);
  CHECK(o.out.find("batch 2: int8 cpu.21_int8_direct_madd") != std::string::npos);
  const auto doc = nlohmann::json::parse(test::slurp(json));
  REQUIRE(doc["results"].size() == 4);
  for (const auto& r : doc["results"]) {
    CHECK(r["status"] == "ok");
    const bool int8 = r["kernel"] == "cpu.21_int8_direct_madd";
    CHECK(r["precision"] == (int8 ? "int8" : "fp32"));
    CHECK(r.contains("quantization") == int8);
    if (!int8) continue;
    CHECK(r["quantization"]["source"] == "min/max calibration on 4 seeded inputs");
    CHECK(r["quantization"]["eval_inputs"] == 8);
    CHECK(r["quantization"]["layer_sqnr_db"].contains("layer3.0.conv2"));
  }
  test::check_usage_error("run --model resnet8 --kernel cpu.21_int8_direct_madd",
                          "--kernel: cpu.21_int8_direct_madd is an int8 kernel: add --precision int8");
  test::check_usage_error("run --model resnet8 --precision int8 --kernel cpu.02_direct_xsimd",
                          "--kernel: cpu.02_direct_xsimd is an fp32 kernel: add --precision fp32");
  test::check_usage_error("run --model resnet8 --precision int8 --backend metal",
                          "--precision int8: the metal backend has no int8 kernels");
  test::check_usage_error("run --model resnet8 --precision int8 --backend cuda --kernel cpu.21_int8_direct_madd",
                          "'cpu.21_int8_direct_madd' is not an int8 kernel of cuda");
  test::check_usage_error("run --model resnet8 --precision int8 --eval-inputs 0", "--eval-inputs: 0 must be at least 1");
}

TEST_CASE("cli: sweep, policy and --fresh-process take int8 rows as run does") {
  const std::string quick = " --warmup 0 --trials 2 --calibration 4 --eval-inputs 4";
  // sweep: both precisions, model-only and end-to-end, the int8 rows quantised as `run` quantises.
  const fs::path sweep = test::scratch() / "sweep-int8.json";
  test::Outcome o = test::run_convlab("sweep --model lenet5 --precision fp32,int8 --kernel "
                                      "cpu.02_direct_xsimd,cpu.24_int8_direct_rows --batch 1,2" + quick +
                                      " --json " + sweep.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("model-only cpu.24_int8_direct_rows: batch 1 -> 2") != std::string::npos);
  CHECK(o.out.find("end-to-end cpu.24_int8_direct_rows: batch 1 -> 2") != std::string::npos);
  const auto doc = nlohmann::json::parse(test::slurp(sweep));
  REQUIRE(doc["results"].size() == 8);
  int int8_rows = 0;
  for (const auto& r : doc["results"]) {
    CHECK(r["status"] == "ok");
    CHECK(r.contains("quantization_options") == (r["precision"] == "int8"));
    if (r["precision"] != "int8") continue;
    ++int8_rows;
    CHECK(r["kernel"] == "cpu.24_int8_direct_rows");
    CHECK(r["quantization"]["source"] == "min/max calibration on 4 seeded inputs");
    CHECK(r["quantization_options"] == "--calibration 4");  // what quantises the same way again
  }
  CHECK(int8_rows == 4);
  // policy: one precision; int8 measures cpu.auto_int8, and the check command says how it was quantised.
  o = test::run_convlab("policy --model lenet5 --precision int8 --batch 1,2 --rate 2 --slo-p99-ms 2000 --requests 2000" +
                        quick);
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("measured now with cpu.auto_int8") != std::string::npos);
  CHECK(o.out.find("--kernel cpu.auto_int8 --batch ") != std::string::npos);
  CHECK(o.out.find(" --precision int8 --calibration 4 --trials 200") != std::string::npos);
  test::check_usage_error("policy --model lenet5 --rate 2 --slo-p99-ms 20 --precision fp32,int8",
                          "--precision: a policy serves one precision (fp32 or int8), not 'fp32,int8'");
  test::check_usage_error("policy --model lenet5 --rate 2 --slo-p99-ms 20 --kernel "
                          "cpu.02_direct_xsimd,cpu.08_direct_rows",
                          "--kernel: a policy serves one kernel, not 2 (cpu.02_direct_xsimd,cpu.08_direct_rows)");
  test::check_usage_error("policy --model lenet5 --rate 2 --slo-p99-ms 20 --precision int8 --from " + sweep.string(),
                          "--precision: applies to measuring now; from a file, choose its int8 rows by --kernel");
  // From the file, the check command quantises as the file's int8 rows were.
  o = test::run_convlab("policy --model lenet5 --kernel cpu.24_int8_direct_rows --rate 2 --slo-p99-ms 2000 "
                        "--requests 2000 --from " + sweep.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("--kernel cpu.24_int8_direct_rows --batch ") != std::string::npos);
  CHECK(o.out.find(" --precision int8 --calibration 4") != std::string::npos);
  // --fresh-process: each new process loads the interchange file and runs the int8 forward.
  const fs::path fresh = test::scratch() / "fresh-int8.json";
  o = test::run_convlab("run --model mobilenet-tiny --precision int8 --kernel cpu.24_int8_direct_rows --quantized " +
                        std::string(CONVLAB_TEST_DATA) + "/mobilenet-tiny/int8/quantized.safetensors --batch 1 "
                        "--fresh-process 2 --warmup 0 --trials 2 --eval-inputs 4 --json " + fresh.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  const auto fresh_doc = nlohmann::json::parse(test::slurp(fresh));
  CHECK(fresh_doc["results"][0]["quantization_options"] ==
        "--quantized " + std::string(CONVLAB_TEST_DATA) + "/mobilenet-tiny/int8/quantized.safetensors");
  const auto& f = fresh_doc["results"][0]["fresh_process"];
  CHECK(f["runs"] == 2);
  REQUIRE(f["samples_ms"].size() == 2);
  for (std::size_t i = 0; i < 2; ++i)  // from process start: more than the forward alone
    CHECK(f["samples_ms"][i].get<double>() > f["first_forward_samples_ms"][i].get<double>());
}

TEST_CASE("cli: run --interleave times a batch's FP32 and int8 rows together, the oracle alone, each still checked") {
  const fs::path json = test::scratch() / "run-interleave.json";
  const test::Outcome o = test::run_convlab(
      "run --model lenet5 --precision fp32,int8 --kernel cpu.00_reference,cpu.02_direct_xsimd,cpu.24_int8_direct_rows "
      "--batch 1,2 --warmup 1 --trials 3 --calibration 4 --eval-inputs 4 --per-layer --interleave --json " + json.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(o.out.find("batch 2: int8 cpu.24_int8_direct_rows") != std::string::npos);
  const auto doc = nlohmann::json::parse(test::slurp(json));
  REQUIRE(doc["results"].size() == 6);
  for (std::size_t i = 0; i < 6; ++i) {
    const auto& r = doc["results"][i];
    CAPTURE(r["kernel"]);
    CHECK(r["batch"] == (i < 3 ? 1 : 2));  // batch by batch
    CHECK(r["status"] == "ok");             // each checked against its oracle after the rounds
    CHECK(r["samples_ms"].size() == 3);
    CHECK(r.contains("interleaved") == (r["kernel"] != "cpu.00_reference"));
    CHECK(r["precision"] == (r["kernel"] == "cpu.24_int8_direct_rows" ? "int8" : "fp32"));
    CHECK(r.contains("quantization") == (r["precision"] == "int8"));
    CHECK(r["per_layer"].size() == 7);  // lenet5's layers
    CHECK(std::ranges::find(r["flags"], "memory_not_own") != r["flags"].end());  // the set's memory, not the row's
  }
  test::check_usage_error("run --model lenet5 --interleave --end-to-end", "--interleave times forward passes only, not with --end-to-end");
  test::check_usage_error("run --model lenet5 --interleave --fresh-process 2", "--interleave times forward passes only, not with --fresh-process");
  test::check_usage_error("run --model lenet5 --interleave --backend cuda", "--interleave runs on the CPU backend only for now");
}

TEST_CASE("cli: run --precision int8 --per-layer times each int8 layer and names its kernel") {
  const fs::path json = test::scratch() / "int8-layers.json";
  const test::Outcome o = test::run_convlab("run --model mobilenet-tiny --precision int8 --kernel cpu.21_int8_direct_madd "
                                            "--batch 2 --warmup 1 --trials 3 --calibration 4 --eval-inputs 4 --per-layer "
                                            "--threads 1 --json " + json.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  const auto doc = nlohmann::json::parse(test::slurp(json));
  REQUIRE(doc["results"].size() == 1);
  const auto& layers = doc["results"][0]["per_layer"];
  REQUIRE(layers.size() == 13);
  double share = 0;
  for (const auto& l : layers) {
    CHECK(l["p50_ms"].get<double>() > 0);
    share += l["share"].get<double>();
  }
  CHECK(share == doctest::Approx(1.0));
  CHECK(layers[1]["layer"] == "features.1.dw");
  CHECK(layers[1]["kernel"] == "cpu.22_int8_depthwise");  // cpu.21 runs no depthwise layer
  CHECK(layers[2]["kernel"] == "cpu.21_int8_direct_madd");
}

TEST_CASE("cli: --kernel cpu.auto with --precision int8 runs cpu.auto_int8, which names the kernel it chose per layer") {
  const fs::path json = test::scratch() / "int8-auto.json";
  const test::Outcome o = test::run_convlab("run --model mobilenet-tiny --precision int8 --kernel cpu.auto "
                                            "--batch 2 --warmup 1 --trials 3 --calibration 4 --eval-inputs 4 --per-layer "
                                            "--threads 1 --json " + json.string());
  REQUIRE_MESSAGE(o.code == 0, o.err);
  const auto doc = nlohmann::json::parse(test::slurp(json));
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["kernel"] == "cpu.auto_int8");
  const auto& layers = doc["results"][0]["per_layer"];
  REQUIRE(layers.size() == 13);
  // Measured, so any candidate may win; "A / B" where inputs under 128 take a faster path
  // (int8_simd.hpp) and A won on those, B on the others.
  const auto choices_of = [](const std::string& id) {
    const std::size_t slash = id.find(" / ");
    return slash == std::string::npos ? std::vector{id} : std::vector{id.substr(0, slash), id.substr(slash + 3)};
  };
  const std::set<std::string> depthwise_kernels{"cpu.22_int8_depthwise", "cpu.25_int8_depthwise_rows"},
      dense_kernels{"cpu.21_int8_direct_madd", "cpu.23_int8_direct_vnni", "cpu.24_int8_direct_rows"};
  const std::vector<std::string> depthwise = choices_of(layers[1]["kernel"]), dense = choices_of(layers[2]["kernel"]);
  for (const std::string& id : depthwise) CHECK(depthwise_kernels.contains(id));
  for (const std::string& id : dense) CHECK(dense_kernels.contains(id));
  // --explain's lines: per layer the choice, its margin and every candidate's median; where the
  // seven-bit path exists (and the layer's zero point is under 128), a measurement for each kind of input.
  const auto& choices = doc["results"][0]["kernel_choices"];
  REQUIRE(choices.size() >= 2);
  const std::string why = choices[1];
  if (cpu::int8::kSevenBitPath) {
    CHECK(why.starts_with("features.1.dw: inputs under 128: chose " + depthwise.front() + ", "));
    CHECK(why.find("; other inputs: chose " + depthwise.back() + ", ") != std::string::npos);
  } else {
    CHECK(depthwise.size() == 1);
    CHECK(why.starts_with("features.1.dw: chose " + depthwise.front() + ", "));
  }
  CHECK(why.find("interleaved rounds") != std::string::npos);
  CHECK(why.find("cpu.22_int8_depthwise ") != std::string::npos);
  CHECK(why.find("cpu.25_int8_depthwise_rows ") != std::string::npos);
}

TEST_CASE("peak: the int8 probe names its instruction and measures both thread counts") {
  Peak peak{.threads = 2};
  measure_int8_peak(peak, 20000, 1);
#if defined(__AVX2__)
  CHECK(!peak.int8_instruction.empty());
  CHECK(peak.int8_gops_one > 0);
  CHECK(peak.int8_gops_all > 0);
  CHECK(peak.int16_pair_gops_one > 0);
  CHECK(peak.int16_pair_gops_all > 0);
  CHECK(to_json(peak).contains("int8_gops_all_threads"));
#else
  CHECK(peak.int8_gops_all == 0);  // no probe for this ISA: no figure, rather than a wrong one
  CHECK_FALSE(to_json(peak).contains("int8_gops_all_threads"));
#endif
}
