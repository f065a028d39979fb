// `convlab validate --precision int8`: runs a quantised network (the interchange file of
// models/quantized_file.hpp) on a PyTorch input with each chosen int8 kernel and compares every
// layer's output, dequantised, with the quantised PyTorch model's (tools/export_torch.py --quantize
// int8), counting differences in quanta of the layer's output scale (bench/check/tolerance.hpp).
#pragma once

#include <string>
#include <vector>

#include "bench/check/validate.hpp"
#include "models/gpu_int8_network.hpp"
#include "models/quantized_network.hpp"

namespace convlab {

// `kernel_id` (an int8 kernel) runs every conv and linear layer it supports, the oracle
// (cpu.20_int8_reference) or our depthwise kernel the others, as Int8NetworkPlan chooses; with
// `gpu`, a CUDA int8 kernel on that runtime, cuda.22_int8_direct the layers it does not support
// (GpuInt8NetworkPlan). Each
// layer whose inputs the expect file holds is judged on those inputs (the reference's bytes), so
// that only its own rounding can differ; the whole network from the input is run too, and how far
// the differences drift through it is reported (chained_*) with the logits' top-1 agreement, which
// is judged. Throws InputError when the kernel supports no layer.
KernelValidation validate_int8_kernel(const QuantizedNetwork& q, const StoredTensor& input, const TensorFile& expect,
                                      const std::string& kernel_id, gpu::GpuRuntime* gpu = nullptr);

// The int8 kernels of `backend` that support at least one conv or linear layer of `net` at
// `batch`, in list order.
std::vector<std::string> int8_kernels_covering(const Network& net, std::int64_t batch, Backend backend);

}  // namespace convlab
