// The registry: the per-backend X-macro lists expanded into one table. No self-registering
// statics, so nothing is silently dropped by the linker from a static library.
#include <array>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab {

#define CONVLAB_DECLARE_KERNEL(symbol)                                              \
  std::string symbol##_unsupported(const ConvProblem&);                            \
  std::unique_ptr<PlannedConv> symbol##_plan(const ConvProblem&, const ConvWeights&, Epilogue);

#define CONVLAB_DECLARE_INT8_KERNEL(symbol)                           \
  std::string symbol##_unsupported(const ConvProblem&);               \
  std::unique_ptr<PlannedInt8Conv> symbol##_plan(const ConvProblem&, const Int8ConvWeights&, Epilogue);

namespace cpu {
#define CONVLAB_CPU_KERNEL(symbol, id, summary, deterministic, error_scale) CONVLAB_DECLARE_KERNEL(symbol)
#include "kernels/cpu/cpu_kernels.inc"
#undef CONVLAB_CPU_KERNEL
#define CONVLAB_CPU_INT8_KERNEL(symbol, id, summary, deterministic) CONVLAB_DECLARE_INT8_KERNEL(symbol)
#include "kernels/cpu/cpu_int8_kernels.inc"
#undef CONVLAB_CPU_INT8_KERNEL
}  // namespace cpu

namespace baseline {
#define CONVLAB_BASELINE_KERNEL(symbol, id, summary, deterministic, error_scale) CONVLAB_DECLARE_KERNEL(symbol)
#define CONVLAB_BASELINE_INT8_KERNEL(symbol, id, summary, deterministic, max_quanta) CONVLAB_DECLARE_INT8_KERNEL(symbol)
#include "kernels/baseline/baseline_kernels.inc"
#undef CONVLAB_BASELINE_INT8_KERNEL
#undef CONVLAB_BASELINE_KERNEL
}  // namespace baseline

namespace cuda {  // listed in every build; without CUDA, plan says the build has none
#define CONVLAB_CUDA_KERNEL(symbol, id, summary, deterministic, error_scale) CONVLAB_DECLARE_KERNEL(symbol)
#define CONVLAB_CUDA_AUTO CONVLAB_CUDA_KERNEL
#include "kernels/cuda/cuda_kernels.inc"
#undef CONVLAB_CUDA_AUTO
#undef CONVLAB_CUDA_KERNEL
#define CONVLAB_CUDA_INT8_KERNEL(symbol, id, summary, deterministic) CONVLAB_DECLARE_INT8_KERNEL(symbol)
#include "kernels/cuda/cuda_int8_kernels.inc"
#undef CONVLAB_CUDA_INT8_KERNEL
}  // namespace cuda

namespace metal {  // listed in every build; off macOS, plan says the backend needs it
#define CONVLAB_METAL_KERNEL(symbol, id, summary, deterministic, error_scale, ...) CONVLAB_DECLARE_KERNEL(symbol)
#define CONVLAB_METAL_AUTO CONVLAB_METAL_KERNEL
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
}  // namespace metal

namespace {
// Sentinel first entry lets an empty list compile; all_kernels() skips it.
const KernelInfo kKernels[] = {
    {"", Backend::cpu, "", false, true, 1.0, nullptr, nullptr},
#define CONVLAB_CPU_KERNEL(symbol, id, summary, deterministic, error_scale) \
  {id, Backend::cpu, summary, false, deterministic, error_scale, &cpu::symbol##_unsupported, &cpu::symbol##_plan},
#include "kernels/cpu/cpu_kernels.inc"
#undef CONVLAB_CPU_KERNEL
#define CONVLAB_BASELINE_KERNEL(symbol, id, summary, deterministic, error_scale) \
  {id, Backend::cpu, summary, true, deterministic, error_scale, &baseline::symbol##_unsupported, &baseline::symbol##_plan},
#define CONVLAB_BASELINE_INT8_KERNEL(...)
#include "kernels/baseline/baseline_kernels.inc"
#undef CONVLAB_BASELINE_INT8_KERNEL
#undef CONVLAB_BASELINE_KERNEL
#define CONVLAB_CUDA_KERNEL(symbol, id, summary, deterministic, error_scale) \
  {id, Backend::cuda, summary, false, deterministic, error_scale, &cuda::symbol##_unsupported, &cuda::symbol##_plan},
#define CONVLAB_CUDA_AUTO CONVLAB_CUDA_KERNEL
#include "kernels/cuda/cuda_kernels.inc"
#undef CONVLAB_CUDA_AUTO
#undef CONVLAB_CUDA_KERNEL
#define CONVLAB_METAL_KERNEL(symbol, id, summary, deterministic, error_scale, ...) \
  {id, Backend::metal, summary, false, deterministic, error_scale, &metal::symbol##_unsupported, &metal::symbol##_plan},
#define CONVLAB_METAL_AUTO CONVLAB_METAL_KERNEL
#include "metal/metal_kernels.inc"
#undef CONVLAB_METAL_AUTO
#undef CONVLAB_METAL_KERNEL
};

const Int8KernelInfo kInt8Kernels[] = {
    {"", Backend::cpu, "", false, true, 0, nullptr, nullptr},
#define CONVLAB_CPU_INT8_KERNEL(symbol, id, summary, deterministic) \
  {id, Backend::cpu, summary, false, deterministic, 0, &cpu::symbol##_unsupported, &cpu::symbol##_plan},
#include "kernels/cpu/cpu_int8_kernels.inc"
#undef CONVLAB_CPU_INT8_KERNEL
#define CONVLAB_BASELINE_KERNEL(...)
#define CONVLAB_BASELINE_INT8_KERNEL(symbol, id, summary, deterministic, max_quanta) \
  {id, Backend::cpu, summary, true, deterministic, max_quanta, &baseline::symbol##_unsupported, &baseline::symbol##_plan},
#include "kernels/baseline/baseline_kernels.inc"
#undef CONVLAB_BASELINE_INT8_KERNEL
#undef CONVLAB_BASELINE_KERNEL
#define CONVLAB_CUDA_INT8_KERNEL(symbol, id, summary, deterministic) \
  {id, Backend::cuda, summary, false, deterministic, 0, &cuda::symbol##_unsupported, &cuda::symbol##_plan},
#include "kernels/cuda/cuda_int8_kernels.inc"
#undef CONVLAB_CUDA_INT8_KERNEL
};
}  // namespace

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::cpu: return "cpu";
    case Backend::cuda: return "cuda";
    case Backend::metal: return "metal";
  }
  return "?";
}

std::string_view to_string(Precision precision) { return precision == Precision::int8 ? "int8" : "fp32"; }

std::string_view to_string(Activation activation) {
  switch (activation) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::relu6: return "relu6";
  }
  return "?";
}

std::span<const KernelInfo> all_kernels() { return std::span(kKernels).subspan(1); }

std::span<const AbsentKernel> absent_kernels() {
#ifdef CONVLAB_WITH_ONEDNN
  return {};
#else
  static constexpr AbsentKernel kAbsent[] = {
      {"onednn.conv", "cpu",
       "no oneDNN for this target when convlab was configured (apt-get install libdnnl-dev; cross builds "
       "have none)"},
      {"onednn.conv_int8", "cpu",
       "no oneDNN for this target when convlab was configured (apt-get install libdnnl-dev; cross builds "
       "have none)"}};
  return kAbsent;
#endif
}

const KernelInfo* find_kernel(std::string_view id) {
  for (const KernelInfo& k : all_kernels())
    if (k.id == id) return &k;
  return nullptr;
}

std::span<const Int8KernelInfo> all_int8_kernels() { return std::span(kInt8Kernels).subspan(1); }

const Int8KernelInfo* find_int8_kernel(std::string_view id) {
  for (const Int8KernelInfo& k : all_int8_kernels())
    if (k.id == id) return &k;
  return nullptr;
}

void check_weights(const ConvProblem& p, const ConvWeights& weights) {
  const auto expected = static_cast<std::size_t>(p.weight_elems());
  if (weights.weight.size() != expected)
    throw InputError(fmt::format("{}: weight has {} values, the problem needs {} (oc {} x ic/g {} x kh {} x kw {})",
                                 to_string(p), weights.weight.size(), expected, p.k, p.c_per_group(), p.r, p.s));
  if (!weights.bias.empty() && weights.bias.size() != static_cast<std::size_t>(p.k))
    throw InputError(fmt::format("{}: bias has {} values, the problem needs {} (oc)", to_string(p),
                                 weights.bias.size(), p.k));
}

}  // namespace convlab
