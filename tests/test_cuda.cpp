// The GPU backends beyond single convolutions (tests/test_kernels.cpp sweeps those): the network
// ops, the residual epilogue, whole networks against PyTorch (CUDA and Metal), memory accounting
// and the no-device path. Every check runs on the CPU emulators, and on the GPU too when there is
// one. tests/test_metal.cpp has what is Metal's own.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "bench/harness/gpu_model_bench.hpp"
#include "bench/harness/per_layer.hpp"
#include "bench/check/tolerance.hpp"
#include "bench/check/validate.hpp"
#include "conv_test_util.hpp"
#include "golden_test_util.hpp"
#include "kernels/common/error.hpp"
#include "kernels/cpu/ops.hpp"
#include "models/catalog.hpp"
#include "models/gpu_network.hpp"
#include "models/weight_file.hpp"

using namespace convlab;

namespace {

// Uploads `host`, runs `body` with the device copy, downloads `out_floats` results.
template <class Body>
std::vector<float> on_device(gpu::GpuRuntime& rt, const std::vector<float>& host, std::size_t out_floats, Body body) {
  const gpu::DeviceBuffer in(rt, host.size()), out(rt, out_floats);
  rt.upload(in.data(), host.data(), host.size());
  body(in.data(), out.data());
  std::vector<float> result(out_floats);
  rt.download(result.data(), out.data(), out_floats);
  rt.synchronize();
  return result;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance * std::max(1.0f, std::fabs(want[i])))) ++bad;
  CHECK_MESSAGE(bad == 0, bad << " of " << got.size() << " values differ");
}

// Runs both plans of one network on the same seeded input; their outputs must agree.
void check_same_outputs(GpuNetworkPlan& a, GpuNetworkPlan& b, gpu::GpuRuntime& rt, std::uint64_t seed) {
  for (GpuNetworkPlan* plan : {&a, &b}) {
    fill_uniform(plan->input().span(), seed, 0);
    plan->upload_input();
    plan->forward();
    plan->download_output();
  }
  rt.synchronize();
  check_close(std::vector<float>(a.output().span().begin(), a.output().span().end()),
              std::vector<float>(b.output().span().begin(), b.output().span().end()), 1e-5);
}

}  // namespace

TEST_CASE("cuda: pooling, global average, linear, add and softmax match the CPU ops") {
  for (const test::Executor& where : test::gpu_runtimes()) {
    CAPTURE(where.name);
    gpu::GpuRuntime& rt = *where.gpu;
    const Shape s = nchw(2, 3, 9, 7);
    const auto x = test::random_values(s.elems(), 11);
    for (const ops::Pool2d pool : {ops::Pool2d{2, 2, 0}, ops::Pool2d{3, 2, 1}, ops::Pool2d{3, 1, 1}}) {
      const Shape o = ops::pool_output_shape(s, pool);
      for (const bool average : {false, true}) {
        std::vector<float> want(static_cast<std::size_t>(o.elems()));
        (average ? ops::avg_pool2d : ops::max_pool2d)(x.data(), s, want.data(), pool);
        const auto got = on_device(rt, x, want.size(), [&](const float* in, float* out) {
          rt.pool(gpu::PoolArgs{.in = in, .out = out, .planes = 6, .h = 9, .w = 7, .oh = static_cast<int>(o.h()),
                                 .ow = static_cast<int>(o.w()), .kernel = static_cast<int>(pool.kernel),
                                 .stride = static_cast<int>(pool.stride), .pad = static_cast<int>(pool.pad)},
                  average);
        });
        check_close(got, want, 1e-6);
      }
    }
    std::vector<float> mean(6);
    ops::global_avg_pool(x.data(), s, mean.data());
    check_close(on_device(rt, x, 6, [&](const float* in, float* out) { rt.global_avg_pool(in, 6, 63, out); }), mean, 1e-6);

    const int batch = 3, in_features = 70, out_features = 37;  // not multiples of a warp
    const auto xi = test::random_values(batch * in_features, 12);
    const auto w = test::random_values(in_features * out_features, 13), b = test::random_values(out_features, 14);
    const gpu::DeviceBuffer dw(rt, w.size()), db(rt, b.size());
    rt.upload(dw.data(), w.data(), w.size());
    rt.upload(db.data(), b.data(), b.size());
    for (const bool relu : {false, true}) {
      std::vector<float> want(batch * out_features);
      ops::linear(xi.data(), batch, in_features, w.data(), b.data(), out_features, want.data(), relu);
      check_close(on_device(rt, xi, want.size(),
                            [&](const float* in, float* out) {
                              rt.linear(in, batch, in_features, dw.data(), db.data(), out_features, out, relu);
                            }),
                  want, 1e-5);
      std::vector<float> sum(x.size());
      ops::add(x.data(), x.data(), sum.data(), s.elems(), relu);
      check_close(on_device(rt, x, x.size(), [&](const float* in, float* out) { rt.add(in, in, out, s.elems(), relu); }),
                  sum, 0);
    }
    std::vector<float> p(batch * in_features);
    ops::softmax(xi.data(), batch, in_features, p.data());
    check_close(on_device(rt, xi, p.size(), [&](const float* in, float* out) { rt.softmax(in, batch, in_features, out); }),
                p, 1e-6);
  }
}

TEST_CASE("cuda: the residual epilogue adds the other branch before the activation") {
  const ConvProblem p = parse_problem("mb2ic8ih9oc12oh9kh3ph1");
  const auto x = test::random_values(p.input_elems(), 1), w = test::random_values(p.weight_elems(), 2);
  const auto b = test::random_values(p.k, 3), residual = test::random_values(p.output_elems(), 4);
  const auto conv = test::run_kernel(*find_kernel("cpu.00_reference"), p, x, w, b, Activation::none);
  std::vector<float> want(conv.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = std::max(conv[i] + residual[i], 0.0f);
  for (const test::Executor& where : test::gpu_runtimes()) {
    const std::vector<const char*> ids =
        where.backend == Backend::cuda
            ? std::vector<const char*>{"cuda.00_naive", "cuda.01_smem_tiled", "cuda.02_implicit_gemm", "cuda.06_implicit_gemm_splitk"}
            : std::vector<const char*>{"metal.00_naive", "metal.01_threadgroup_tiled", "metal.02_simdgroup_matrix"};
    for (const char* v : ids) {
      CAPTURE(where.name);
      CAPTURE(v);
      gpu::GpuRuntime& rt = *where.gpu;
      const gpu::GpuConv planned(rt, v, p, ConvWeights{w, b}, Epilogue{.activation = Activation::relu});
      const gpu::DeviceBuffer dr(rt, residual.size());
      rt.upload(dr.data(), residual.data(), residual.size());
      check_close(on_device(rt, x, want.size(), [&](const float* in, float* out) { planned.run(in, out, dr.data()); }),
                  want, 1e-5);
    }
  }
}

TEST_CASE("cuda: a pool fused into cuda.06's reduction gives the conv's output pooled") {
  // Odd sizes, a residual and several splits (mb2: 64 x 4 x 4 = 576 taps, few pixel tiles).
  const ConvProblem p = parse_problem("mb2ic64ih9iw7oc12oh9ow7kh3ph1");
  const auto x = test::random_values(p.input_elems(), 1), w = test::random_values(p.weight_elems(), 2);
  const auto b = test::random_values(p.k, 3), residual = test::random_values(p.output_elems(), 4);
  const Shape conv_shape = nchw(p.n, p.k, p.out_h(), p.out_w());
  auto conv = test::run_kernel(*find_kernel("cpu.00_reference"), p, x, w, b, Activation::none);
  for (std::size_t i = 0; i < conv.size(); ++i) conv[i] = std::max(conv[i] + residual[i], 0.0f);
  for (const test::Executor& where : test::gpu_runtimes()) {
    if (where.backend != Backend::cuda) continue;
    CAPTURE(where.name);
    gpu::GpuRuntime& rt = *where.gpu;
    REQUIRE(cuda::split_k(gpu::to_shape(p)).splits > 1);
    const gpu::DeviceBuffer dr(rt, residual.size());
    rt.upload(dr.data(), residual.data(), residual.size());
    const auto fused = [&](gpu::FusedPool pool, std::size_t out_floats) {
      const gpu::GpuConv planned(rt, "cuda.06_implicit_gemm_splitk", p, ConvWeights{w, b},
                                  Epilogue{.activation = Activation::relu}, pool);
      return on_device(rt, x, out_floats, [&](const float* in, float* out) { planned.run(in, out, dr.data()); });
    };
    for (const ops::Pool2d pool : {ops::Pool2d{2, 2, 0}, ops::Pool2d{3, 2, 1}}) {
      const Shape o = ops::pool_output_shape(conv_shape, pool);
      for (const bool average : {false, true}) {
        CAPTURE(pool.kernel);
        CAPTURE(average);
        std::vector<float> want(static_cast<std::size_t>(o.elems()));
        (average ? ops::avg_pool2d : ops::max_pool2d)(conv.data(), conv_shape, want.data(), pool);
        const gpu::FusedPool fp{.kind = average ? gpu::kPoolAvg : gpu::kPoolMax, .kernel = static_cast<int>(pool.kernel),
                                 .stride = static_cast<int>(pool.stride), .pad = static_cast<int>(pool.pad),
                                 .oh = static_cast<int>(o.h()), .ow = static_cast<int>(o.w())};
        check_close(fused(fp, want.size()), want, 1e-5);
      }
    }
    std::vector<float> mean(static_cast<std::size_t>(p.n * p.k));
    ops::global_avg_pool(conv.data(), conv_shape, mean.data());
    check_close(fused({.kind = gpu::kPoolGlobalAvg, .oh = 1, .ow = 1}, mean.size()), mean, 1e-5);
    // The kernels whose last pass cannot pool refuse to plan it, by name.
    CHECK_THROWS_WITH_AS(gpu::GpuConv(rt, "cuda.02_implicit_gemm", p, ConvWeights{w, b}, Epilogue{},
                                       {.kind = gpu::kPoolMax, .kernel = 2, .stride = 2, .oh = 4, .ow = 3}),
                         doctest::Contains("cannot fuse a pooling layer"), InputError);
  }
}

TEST_CASE("gpu: every network matches PyTorch end to end, every CUDA and Metal kernel, wherever it runs") {
  for (const char* model : {"lab-cnn", "lenet5", "resnet8", "mobilenet-tiny"}) {
    // batch 1 and 3 of the built-in network, and batch 1 of PyTorch's ONNX export of it
    // (tests/data/<model>/model.onnx, imported: its layers named by the graph's outputs)
    for (const int batch : {1, 3, 0}) {
      const bool onnx = batch == 0;
#ifndef CONVLAB_WITH_ONNX
      if (onnx) continue;
#endif
      if (batch != 1 && test::short_run()) continue;  // the native run has batch 3 and the ONNX import
      const test::Golden g = test::golden(model, onnx ? 1 : batch);
      const Network net = onnx ? load_model(fmt::format("{}/{}/model.onnx", CONVLAB_TEST_DATA, model), "", 0)
                               : build_from_file(*find_model(model), g.weights, model);
      std::vector<std::string> ids = kernels_covering(net, Backend::cuda);
      std::ranges::copy(kernels_covering(net, Backend::metal), std::back_inserter(ids));
      for (const std::string& id : ids) {
        const KernelInfo& k = *find_kernel(id);
        for (const test::Executor& where : test::executors(k)) {
          CAPTURE(model);
          CAPTURE(batch);
          CAPTURE(onnx);
          CAPTURE(k.id);
          CAPTURE(where.name);
          const KernelValidation v = validate_kernel(net, g.input.tensors.at("input"), g.expect, std::string(k.id), where.gpu);
          INFO(describe(v));
          CHECK(v.pass);
          CHECK(v.top1_agree == (onnx ? 1 : batch));
        }
      }
    }
  }
}

#ifdef CONVLAB_WITH_ONNX
TEST_CASE("gpu: a PyTorch CNN padding unevenly, through ONNX, matches PyTorch with every CUDA and Metal kernel") {
  const std::string dir = fmt::format("{}/onnx-padded/", CONVLAB_TEST_DATA);  // tools/make_padded_onnx.py
  const Network net = load_model(dir + "model.onnx", "", 0);
  const TensorFile input = read_safetensors(dir + "input.safetensors"), expect = read_safetensors(dir + "expect.safetensors");
  std::vector<std::string> ids = kernels_covering(net, Backend::cuda);
  std::ranges::copy(kernels_covering(net, Backend::metal), std::back_inserter(ids));
  CHECK(ids.size() >= 4);
  for (const std::string& id : ids) {
    const KernelInfo& k = *find_kernel(id);
    for (const test::Executor& where : test::executors(k)) {
      CAPTURE(k.id);
      CAPTURE(where.name);
      const KernelValidation v = validate_kernel(net, input.tensors.at("input"), expect, std::string(k.id), where.gpu);
      INFO(describe(v));
      CHECK(v.pass);
      CHECK(v.top1_agree == 2);
    }
  }
}
#endif

TEST_CASE("cuda: resnet8's residual adds are fused into the convs before them, with the same results") {
  const Network net = find_model("resnet8")->build(seeded_weights(5));
  gpu::GpuRuntime& rt = test::emulator();
  GpuNetworkPlan fused(net, 1, KernelSelection{.default_kernel = "cuda.auto"}, rt);
  GpuNetworkPlan plain(net, 1, KernelSelection{.default_kernel = "cuda.auto"}, rt, /*fuse=*/false);
  int fused_layers = 0;
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    if (fused.materialised(static_cast<int>(i))) continue;
    ++fused_layers;
    CHECK(net.layers()[i + 1].kind == LayerKind::add);
    CHECK(fused.explain(static_cast<int>(i)).find("residual add fused") != std::string::npos);
    CHECK_THROWS_AS(fused.download_activation(static_cast<int>(i)), InputError);
  }
  CHECK(fused_layers == 3);  // one per residual block
  check_same_outputs(fused, plain, rt, 5);
}

TEST_CASE("cuda: at batch 1 lab-cnn's pool2 and global average pool run inside conv2's and conv3's split-K reductions") {
  const Network net = find_model("lab-cnn")->build(seeded_weights(6));
  gpu::GpuRuntime& rt = test::emulator();
  GpuNetworkPlan fused(net, 1, KernelSelection{.default_kernel = "cuda.auto"}, rt);
  GpuNetworkPlan plain(net, 1, KernelSelection{.default_kernel = "cuda.auto"}, rt, /*fuse=*/false);
  std::vector<std::string> fused_layers;
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    if (fused.materialised(static_cast<int>(i))) continue;
    fused_layers.push_back(net.layers()[i].name);
    CHECK(fused.explain(static_cast<int>(i)).starts_with("cuda.06_implicit_gemm_splitk + "));
    CHECK_THROWS_AS(fused.download_activation(static_cast<int>(i)), InputError);
  }
  // conv1 (27 taps) is too short to split, so cuda.auto runs it unsplit and pool1 stays apart.
  CHECK(fused_layers == std::vector<std::string>{"conv2", "conv3"});
  CHECK(fused.explain(2) == "cuda.06_implicit_gemm_splitk + max_pool fused");
  CHECK(fused.explain(4) == "cuda.06_implicit_gemm_splitk + global_avg_pool fused");
  check_same_outputs(fused, plain, rt, 6);
  // At batch 32 conv2 has tiles enough: cuda.auto runs cuda.02, which cannot pool, so pool2 runs.
  const GpuNetworkPlan batch32(net, 32, KernelSelection{.default_kernel = "cuda.auto"}, rt);
  CHECK(batch32.materialised(2));
  CHECK(batch32.explain(2) == "cuda.02_implicit_gemm");
}

TEST_CASE("cuda: device memory is counted, planned up front and given back") {
  gpu::GpuRuntime& rt = test::emulator();
  const std::size_t before = rt.bytes_in_use();
  const Network net = find_model("lab-cnn")->build(seeded_weights(1));
  {
    GpuNetworkPlan plan(net, 4, KernelSelection{.default_kernel = "cuda.02_implicit_gemm"}, rt);
    const MemoryAccount& m = plan.memory();
    CHECK(m.activations_bytes > 0);
    CHECK(m.weights_bytes >= static_cast<std::size_t>(net.parameter_count()) * sizeof(float));
    CHECK(rt.bytes_in_use() - before == m.activations_bytes + m.weights_bytes + m.workspace_bytes);
    const std::size_t planned = rt.bytes_in_use();
    plan.upload_input();
    plan.forward();
    CHECK(rt.bytes_in_use() == planned);  // the forward allocates nothing
  }
  CHECK(rt.bytes_in_use() == before);
  CHECK(rt.peak_bytes() >= before);
}

TEST_CASE("cuda: unsupported layers and unknown kernels are refused by name") {
  const Network net = find_model("mobilenet-tiny")->build(seeded_weights(1));
  CHECK_THROWS_WITH_AS(GpuNetworkPlan(net, 1, KernelSelection{.default_kernel = "cuda.02_implicit_gemm"}, test::emulator()),
                       doctest::Contains("does not support"), InputError);
  CHECK_THROWS_WITH_AS(GpuNetworkPlan(net, 1, KernelSelection{.default_kernel = "cpu.02_direct_xsimd"}, test::emulator()),
                       doctest::Contains("not a CUDA kernel"), InputError);
  CHECK(cuda::conv_kernel("cuda.auto", parse_problem("g32mb1ic32ih8oc32oh8kh3ph1")).id == "cuda.04_depthwise");
  CHECK(cuda::conv_kernel("cuda.auto", parse_problem("mb1ic32ih8oc64oh8kh1")).id == "cuda.05_pointwise");
  CHECK(cuda::conv_kernel("cuda.auto", parse_problem("mb1ic3ih8oc64oh8kh3ph1")).id == "cuda.02_implicit_gemm");
  // One 64 x 64 tile and 36 reduction steps at batch 1: split 18 ways; at batch 32, tiles enough.
  CHECK(cuda::conv_kernel("cuda.auto", parse_problem("mb1ic64ih8oc64oh8kh3ph1")).id == "cuda.06_implicit_gemm_splitk");
  CHECK(cuda::split_k(gpu::to_shape(parse_problem("mb1ic64ih8oc64oh8kh3ph1"))).splits == 18);
  CHECK(cuda::conv_kernel("cuda.auto", parse_problem("mb32ic64ih56oc64oh56kh3ph1")).id == "cuda.02_implicit_gemm");
  CHECK(cuda::conv_kernel("cuda.auto", parse_problem("g2mb1ic4ih8oc4oh8kh3ph1")).id == "cuda.00_naive");
}

TEST_CASE("cuda: without a device the kernels are listed and planning says why it cannot run") {
  if (backend_status(Backend::cuda).available) return;  // this machine has a GPU: nothing to check
  const KernelInfo* k = find_kernel("cuda.02_implicit_gemm");
  REQUIRE(k != nullptr);
  CHECK(k->supports(parse_problem("mb1ic3ih8oc8oh8kh3ph1")));
  const std::vector<float> w(8 * 3 * 9);
  CHECK_THROWS_WITH_AS(k->plan(parse_problem("mb1ic3ih8oc8oh8kh3ph1"), ConvWeights{w, {}}, {}),
                       doctest::Contains("no CUDA device"), InputError);
}

TEST_CASE("cuda: a GPU lab run on the emulator gives the eager and with-transfers rows, checked against the oracle") {
  const Network net = find_model("lab-cnn")->build(seeded_weights(1));
  ModelBenchConfig config{.model = "lab-cnn", .backend = Backend::cuda, .kernels = {"cuda.auto"}, .batches = {1, 2},
                   .protocol = {.warmup = 1, .trials = 3}};
  const std::vector<Result> rows = run_gpu_model_bench(config, net, test::emulator(), {});
  REQUIRE(rows.size() == 4);  // eager and eager+transfers per batch; graphs need a real device
  for (const Result& r : rows) {
    CAPTURE(r.mode);
    CHECK(r.status == ResultStatus::ok);
    CHECK(r.measurement.samples_ms.size() == 3);
    CHECK(r.model_memory.weights_bytes > 0);
    CHECK(r.measurement.device_memory.peak_bytes.value_or(0) >= r.model_memory.activations_bytes);
    CHECK(r.mistrusted.empty());
  }
  CHECK(rows[0].mode == "eager");
  CHECK(rows[1].mode == "eager+transfers");
  CHECK(rows[0].layer_times.empty());
  // The rows name the fusions (the oracle check above covered the fused layers); --no-fuse has none.
  const auto fusions = [](const Result& r) {
    return std::ranges::count_if(r.choices, [](const std::string& c) { return c.ends_with(" fused"); });
  };
  CHECK(std::ranges::count(rows[0].choices, std::string("conv2: cuda.06_implicit_gemm_splitk + max_pool fused")) == 1);
  CHECK(fusions(rows[0]) == 2);
  ModelBenchConfig unfused = config;
  unfused.fuse = false;
  const std::vector<Result> apart = run_gpu_model_bench(unfused, net, test::emulator(), {});
  REQUIRE(apart.size() == 4);
  for (const Result& r : apart) {
    CHECK(r.status == ResultStatus::ok);
    CHECK(fusions(r) == 0);
  }

  // --per-layer: each layer of the eager row, its conv layers named by the kernel cuda.auto chose.
  config.per_layer = true;
  config.batches = {1};
  const std::vector<Result> profiled = run_gpu_model_bench(config, net, test::emulator(), {});
  REQUIRE(profiled.at(0).layer_times.size() == net.layers().size());
  for (std::size_t i = 0; i < net.layers().size(); ++i) {
    const LayerTime& t = profiled[0].layer_times[i];
    CAPTURE(t.layer);
    CHECK(t.layer == net.layers()[i].name);
    CHECK(t.median_ms >= 0);
    if (t.kind == LayerKind::conv)
      CHECK(t.kernel.starts_with("cuda.0"));
    else
      CHECK(t.kernel.empty());
  }
  config.cuda_graph = true;
  CHECK_THROWS_WITH_AS(run_gpu_model_bench(config, net, test::emulator(), {}), doctest::Contains("needs a CUDA device"), InputError);
}
