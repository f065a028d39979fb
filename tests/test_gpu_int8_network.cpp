// Int8 networks on a GPU runtime (models/gpu_int8_network.hpp): the u8 ops of
// kernels/cuda/ops_int8.cu against the CPU's, byte for byte; every small reference network run end
// to end with each CUDA int8 kernel giving the CPU int8 oracle's bytes at every layer; PyTorch's
// quantised models validated; `run`'s int8 GPU rows. On the emulator, and on the GPU when there is one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bench/check/quantization_effect.hpp"
#include "bench/check/validate_int8.hpp"
#include "bench/harness/gpu_model_bench.hpp"
#include "conv_test_util.hpp"
#include "kernels/common/error.hpp"
#include "kernels/cpu/ops.hpp"
#include "models/catalog.hpp"
#include "models/gpu_int8_network.hpp"
#include "models/quantized_file.hpp"
#include "models/quantized_network.hpp"
#include "models/safetensors.hpp"

using namespace convlab;

namespace {

std::vector<test::Executor> cuda_runtimes() {
  std::vector<test::Executor> where;
  for (const test::Executor& e : test::gpu_runtimes())
    if (e.backend == Backend::cuda) where.push_back(e);
  return where;
}

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng() & 0xFF);
  return v;
}

// Device buffers of bytes or floats, filled from and read back to host vectors.
struct Bytes {
  gpu::DeviceBuffer buffer;
  std::size_t size;
  Bytes(gpu::GpuRuntime& rt, std::span<const std::uint8_t> host) : buffer(gpu::DeviceBuffer::of_bytes(rt, host.size())), size(host.size()) {
    rt.upload_bytes(buffer.data(), host.data(), host.size());
  }
  Bytes(gpu::GpuRuntime& rt, std::size_t n) : buffer(gpu::DeviceBuffer::of_bytes(rt, n)), size(n) {}
  unsigned char* data() const { return reinterpret_cast<unsigned char*>(buffer.data()); }
  std::vector<std::uint8_t> read(gpu::GpuRuntime& rt) const {
    std::vector<std::uint8_t> host(size);
    rt.download_bytes(host.data(), buffer.data(), size);
    return host;
  }
};

}  // namespace

TEST_CASE("int8 ops on a GPU runtime: quantize, dequantize, pools and the add give the CPU ops' bytes") {
  for (const test::Executor& e : cuda_runtimes()) {
    CAPTURE(std::string(e.name));
    gpu::GpuRuntime& rt = *e.gpu;
    const QuantParams q{.scale = 0.037f, .zero_point = 71};

    // QuantStub: halves (ties to even), saturation both ways, values far outside, NaN.
    std::vector<float> x = {0.0f, 0.0185f, -0.0185f, 0.0555f, 9.4f, -3.0f, 1e30f, -1e30f,
                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
    std::mt19937 rng(5);
    for (int i = 0; i < 1000; ++i) x.push_back(std::uniform_real_distribution<float>(-4, 8)(rng));
    gpu::DeviceBuffer xd(rt, x.size());
    rt.upload(xd.data(), x.data(), x.size());
    Bytes qd(rt, x.size());
    rt.quantize(xd.data(), qd.data(), static_cast<long long>(x.size()), q.scale, q.zero_point);
    std::vector<std::uint8_t> want(x.size());
    ops::quantize(x.data(), want.data(), static_cast<std::int64_t>(x.size()), q);
    CHECK(qd.read(rt) == want);

    // DeQuantStub.
    const std::vector<std::uint8_t> b = random_bytes(4 * 6 * 9 * 11, 1);
    const Bytes bd(rt, b);
    gpu::DeviceBuffer fd(rt, b.size());
    rt.dequantize(bd.data(), fd.data(), static_cast<long long>(b.size()), q.scale, q.zero_point);
    std::vector<float> got(b.size()), wantf(b.size());
    rt.download(got.data(), fd.data(), got.size());
    rt.synchronize();
    ops::dequantize(b.data(), wantf.data(), static_cast<std::int64_t>(b.size()), q);
    CHECK(got == wantf);

    // Pools over 4 x 6 planes of 9 x 11: the fast 2x2 window, padding, overlapping windows.
    const Shape s{{4, 6, 9, 11}};
    for (const ops::Pool2d pool : {ops::Pool2d{2, 2, 0}, ops::Pool2d{3, 2, 1}, ops::Pool2d{3, 1, 1}, ops::Pool2d{2, 1, 0}})
      for (const bool average : {false, true}) {
        CAPTURE(pool.kernel);
        CAPTURE(pool.stride);
        CAPTURE(pool.pad);
        CAPTURE(average);
        const Shape o = ops::pool_output_shape(s, pool);
        std::vector<std::uint8_t> cpu(static_cast<std::size_t>(o.elems()));
        if (average) ops::avg_pool2d_u8(b.data(), s, cpu.data(), pool, q.zero_point);
        else ops::max_pool2d_u8(b.data(), s, cpu.data(), pool);
        Bytes od(rt, cpu.size());
        rt.pool_u8(gpu::PoolArgsU8{.in = bd.data(), .out = od.data(), .planes = 24, .h = 9, .w = 11,
                                   .oh = static_cast<int>(o.h()), .ow = static_cast<int>(o.w()), .kernel = static_cast<int>(pool.kernel),
                                   .stride = static_cast<int>(pool.stride), .pad = static_cast<int>(pool.pad), .zero_point = q.zero_point},
                   average);
        CHECK(od.read(rt) == cpu);
      }

    // Global average: planes of 99 bytes whose means fall on halves too.
    std::vector<std::uint8_t> gap(24);
    ops::global_avg_pool_u8(b.data(), s, gap.data());
    Bytes gd(rt, gap.size());
    rt.global_avg_pool_u8(bd.data(), 24, 99, gd.data());
    CHECK(gd.read(rt) == gap);
    const std::vector<std::uint8_t> halves = {1, 2, 3, 4, 5, 6, 7, 8};  // means 1.5 (-> 2) and 6.5 (-> 6) of pairs
    const Bytes hd(rt, halves);
    std::vector<std::uint8_t> hcpu(4);
    ops::global_avg_pool_u8(halves.data(), Shape{{1, 4, 1, 2}}, hcpu.data());
    Bytes hod(rt, 4);
    rt.global_avg_pool_u8(hd.data(), 4, 2, hod.data());
    CHECK(hod.read(rt) == hcpu);
    CHECK(hcpu == std::vector<std::uint8_t>{2, 4, 6, 8});

    // The residual add, with and without its ReLU.
    const std::vector<std::uint8_t> c = random_bytes(b.size(), 2);
    const Bytes cd(rt, c);
    const QuantParams qc{.scale = 0.05f, .zero_point = 128}, qo{.scale = 0.061f, .zero_point = 90};
    for (const bool relu : {false, true}) {
      std::vector<std::uint8_t> cpu(b.size());
      ops::add_u8(b.data(), q, c.data(), qc, cpu.data(), qo, static_cast<std::int64_t>(b.size()), relu);
      Bytes od(rt, b.size());
      rt.add_u8(gpu::AddArgsU8{.a = bd.data(), .b = cd.data(), .out = od.data(), .count = static_cast<long long>(b.size()),
                               .a_scale = q.scale / qo.scale, .b_scale = qc.scale / qo.scale, .a_zero_point = q.zero_point,
                               .b_zero_point = qc.zero_point, .out_zero_point = qo.zero_point, .lo = relu ? qo.zero_point : 0});
      CHECK(od.read(rt) == cpu);
    }
  }
}

TEST_CASE("int8 networks on a GPU runtime: every CUDA int8 kernel gives the CPU oracle's bytes at every layer") {
  for (const ModelInfo& model : all_models()) {
    if (model.imagenet_size) continue;  // the same kinds of layer, at a size that keeps CI short
    CAPTURE(model.name);
    const Network net = model.build(seeded_weights(3));
    const QuantizedNetwork q(net, seeded_inputs(net, 16, 5, 1000), "min/max calibration on 16 seeded inputs");
    const std::vector<float> inputs = seeded_inputs(net, 2, 5, 2000);
    Int8NetworkPlan oracle(q, 2, "cpu.20_int8_reference");
    std::ranges::copy(inputs, oracle.input().data());
    oracle.forward();
    const std::vector<float> oracle_output(oracle.output().span().begin(), oracle.output().span().end());
    for (const test::Executor& e : cuda_runtimes())
      for (const Int8KernelInfo& k : all_int8_kernels()) {
        if (k.backend != Backend::cuda) continue;
        CAPTURE(std::string(e.name));
        CAPTURE(k.id);
        GpuInt8NetworkPlan plan(q, 2, std::string(k.id), *e.gpu);
        std::ranges::copy(inputs, plan.input().data());
        plan.upload_input();
        plan.forward();
        plan.download_output();
        e.gpu->synchronize();
        for (std::size_t i = 0; i < net.layers().size(); ++i) {
          const Layer& l = net.layers()[i];
          CAPTURE(l.name);
          if (l.kind == LayerKind::softmax) continue;  // FP32 exponentials: the output check below
          CHECK(plan.dequantized(static_cast<int>(i)) == oracle.dequantized(static_cast<int>(i)));
          // A grouped layer falls back to the kernel that runs every problem; the others keep the chosen one.
          if (has_int8_weights(l))
            CHECK(plan.kernel_ids()[i] == (l.kind == LayerKind::conv && l.conv.groups > 1 && k.id != "cuda.22_int8_direct"
                                               ? "cuda.22_int8_direct" : std::string(k.id)));
        }
        const std::span<const float> out = plan.output().span();
        REQUIRE(out.size() == oracle_output.size());
        for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == doctest::Approx(oracle_output[i]).epsilon(1e-5));
        // A layer alone on bytes put in its input's buffer, as validate runs it.
        const int conv = static_cast<int>(std::ranges::find_if(net.layers(), has_int8_weights) - net.layers().begin());
        const int input = net.layers()[static_cast<std::size_t>(conv)].inputs[0];
        const std::vector<std::uint8_t> fed = random_bytes(plan.activation_bytes(input).size(), 9);
        plan.set_activation_bytes(input, fed);
        Int8NetworkPlan alone(q, 2, "cpu.20_int8_reference");
        std::ranges::copy(fed, alone.activation_bytes(input).begin());
        plan.run_layer(conv);
        alone.run_layer(conv);
        CHECK(plan.dequantized(conv) == alone.dequantized(conv));
        CHECK(plan.memory().weights_bytes > 0);
      }
  }
}

TEST_CASE("int8 networks on a GPU runtime: a kernel that is not the runtime's int8 kernel is refused by name") {
  const Network lenet = model_or_throw("lenet5").build(seeded_weights(1));
  const QuantizedNetwork q(lenet, seeded_inputs(lenet, 2, 5, 1000), "calibration");
  CHECK_THROWS_WITH_AS(GpuInt8NetworkPlan(q, 1, "cpu.21_int8_direct_madd", test::emulator()),
                       doctest::Contains("'cpu.21_int8_direct_madd' is not a CUDA int8 kernel"), InputError);
  CHECK_THROWS_WITH_AS(GpuInt8NetworkPlan(q, 1, "cuda.02_implicit_gemm", test::emulator()),
                       doctest::Contains("'cuda.02_implicit_gemm' is not a CUDA int8 kernel"), InputError);
#ifdef CONVLAB_WITH_METAL_EMULATOR
  CHECK_THROWS_WITH_AS(GpuInt8NetworkPlan(q, 1, "cuda.20_int8_dp4a", test::metal_emulator()),
                       doctest::Contains("has no int8 kernels"), InputError);
#endif
}

TEST_CASE("int8 networks on a GPU runtime: PyTorch's quantised models validate with every CUDA int8 kernel; a flipped weight fails") {
  for (const std::string model : {"resnet8", "mobilenet-tiny"}) {
    CAPTURE(model);
    const std::string dir = std::string(CONVLAB_TEST_DATA) + "/" + model + "/int8/";
    const Network net = model_or_throw(model).build(seeded_weights(0));  // the architecture; the file has the weights
    TensorFile file = read_safetensors(dir + "quantized.safetensors");
    const QuantizedNetwork q = load_quantized(net, file, "quantized.safetensors");
    const TensorFile input = read_safetensors(dir + "input.safetensors"), expect = read_safetensors(dir + "expect.safetensors");
    const std::int64_t batch = input.tensors.at("input").shape[0];
    const std::vector<std::string> covering = int8_kernels_covering(net, batch, Backend::cuda);
    CHECK(covering == std::vector<std::string>{"cuda.20_int8_dp4a", "cuda.21_int8_mma", "cuda.22_int8_direct"});
    for (const test::Executor& e : cuda_runtimes())
      for (const std::string& id : covering) {
        CAPTURE(std::string(e.name));
        CAPTURE(id);
        const KernelValidation v = validate_int8_kernel(q, input.tensors.at("input"), expect, id, e.gpu);
        CHECK_MESSAGE(v.pass, describe(v));
        CHECK(v.conv_layers_run > 0);
      }
    if (model != "resnet8") continue;
    std::vector<std::int64_t>& w = file.tensors.at("layer3.0.conv1.weight").integers;
    const auto largest = std::ranges::max_element(w, {}, [](std::int64_t v) { return v < 0 ? -v : v; });
    *largest = -std::max<std::int64_t>(*largest, -127);
    const QuantizedNetwork flipped = load_quantized(net, file, "flipped");
    const KernelValidation v = validate_int8_kernel(flipped, input.tensors.at("input"), expect, "cuda.21_int8_mma", &test::emulator());
    CHECK_FALSE(v.pass);
    CHECK(v.first_divergent == "layer3.0.conv1");
  }
}

TEST_CASE("int8 networks on a GPU runtime: a lab run gives eager and with-transfers int8 rows, checked against the CPU oracle") {
  const Network net = model_or_throw("mobilenet-tiny").build(seeded_weights(1));
  const QuantizedNetwork q(net, seeded_inputs(net, 4, 5, 1000), "min/max calibration on 4 seeded inputs");
  const Int8Model int8{q, measure_quantization_effect(q, seeded_inputs(net, 4, 5, 2000), "cpu.20_int8_reference")};
  ModelBenchConfig config{.model = "mobilenet-tiny", .backend = Backend::cuda, .kernels = {"cuda.20_int8_dp4a"},
                          .batches = {1, 2}, .protocol = {.warmup = 1, .trials = 3}};
  const std::vector<Result> rows = run_gpu_model_bench(config, net, test::emulator(), {}, &int8);
  REQUIRE(rows.size() == 4);
  for (const Result& r : rows) {
    CAPTURE(r.mode);
    CHECK_MESSAGE(r.status == ResultStatus::ok, r.error);
    CHECK(r.precision == Precision::int8);
    CHECK(r.quantization.has_value());
    CHECK(r.measurement.samples_ms.size() == 3);
    CHECK(r.model_memory.weights_bytes > 0);
    // The depthwise layers are named with the kernel that ran them.
    CHECK(std::ranges::count_if(r.choices, [](const std::string& c) { return c.find(": cuda.22_int8_direct") != std::string::npos; }) > 0);
  }
  CHECK(rows[0].mode == "eager");
  CHECK(rows[1].mode == "eager+transfers");
  config.per_layer = true;
  config.batches = {1};
  const std::vector<Result> profiled = run_gpu_model_bench(config, net, test::emulator(), {}, &int8);
  REQUIRE(profiled.at(0).layer_times.size() == net.layers().size());
  CHECK(profiled[0].layer_times[0].kernel == "cuda.20_int8_dp4a");
  // Without the quantised model an int8 kernel is refused by name.
  CHECK_THROWS_WITH_AS(run_gpu_model_bench(config, net, test::emulator(), {}), doctest::Contains("cuda.20_int8_dp4a"), InputError);
}
