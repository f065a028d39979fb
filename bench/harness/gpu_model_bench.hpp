// `convlab run --backend cuda`: a model on the GPU, measured with the same harness as the CPU.
// For each kernel x batch, three rows (Result::mode):
//   eager            the forward alone, activations resident on the device ("model-only");
//   eager+transfers  the input copied in, the forward, the output copied out ("with transfers");
//   graph            (with --cuda-graph) the forward captured once as a CUDA Graph and replayed:
//                    what is left of batch 1's latency once per-kernel launch overhead is gone.
// Each trial is timed on the host (around the stream synchronize) and on the device (an event pair
// on the stream); the gap between the two is the launch and host overhead. The outputs are
// checked against cpu.00_reference before any row counts as valid.
#pragma once

#include <functional>
#include <vector>

#include "bench/check/quantization_effect.hpp"
#include "bench/harness/device.hpp"
#include "bench/harness/model_bench.hpp"
#include "kernels/gpu/runtime.hpp"
#include "models/quantized_network.hpp"

namespace convlab {

// The harness's view of a GPU runtime: synchronize is the stream's; the device timer and
// graphs exist only for the real CUDA runtime (nullptr for the emulator).
std::unique_ptr<Device> make_gpu_device(gpu::GpuRuntime& rt);

// The int8 model of a run with int8 kernels: quantised once, its prediction change measured once
// (bench/harness/int8_model_bench.hpp), shared by every int8 row.
struct Int8Model {
  const QuantizedNetwork& network;
  QuantizationEffect effect;
};

// `rt` is the CUDA runtime in `convlab run`; the tests pass the emulator. Int8 kernels among
// config.kernels (CUDA's, with config.precision int8) run `int8`'s network: rows of the same modes,
// precision int8, checked byte for byte against the CPU int8 oracle.
std::vector<Result> run_gpu_model_bench(const ModelBenchConfig& config, const Network& net, gpu::GpuRuntime& rt,
                                        const std::function<void(const Result&)>& on_result, const Int8Model* int8 = nullptr);

}  // namespace convlab
