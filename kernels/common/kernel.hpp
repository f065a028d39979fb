// The kernel contract. Every convolution kernel, on every backend, is one KernelInfo entry in its
// backend's list (kernels/<backend>/<backend>_kernels.inc) with two steps:
//   plan: checks the problem, packs or transforms the weights, sizes the workspace. Not timed.
//   run:  the timed forward pass on an NCHW input, writing an NCHW output.
// Bias and an optional ReLU are part of the contract (the epilogue), so a kernel can fuse them.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kernels/common/problem.hpp"

namespace convlab {

enum class Backend { cpu, cuda, metal };
std::string_view to_string(Backend backend);

// What a kernel computes in: FP32 (this contract) or int8 (kernels/common/int8_kernel.hpp).
enum class Precision { fp32, int8 };
std::string_view to_string(Precision precision);

// The activation fused after conv + bias. ReLU6 is MobileNet's clamp to [0, 6].
enum class Activation { none, relu, relu6 };
std::string_view to_string(Activation activation);

struct Epilogue {
  Activation activation = Activation::none;
};

// The scalar definition every kernel's epilogue must match. Like PyTorch's, it lets NaN through
// (NaN < 0 and NaN > 6 are false), so a broken input or kernel is never hidden behind a ReLU.
template <typename T>
constexpr T activate(Activation a, T x) {
  if (a == Activation::none) return x;
  x = x < T(0) ? T(0) : x;
  return a == Activation::relu6 && x > T(6) ? T(6) : x;
}

// Weights as PyTorch stores them: K x C/groups x R x S (OIHW), and K biases (or none).
struct ConvWeights {
  std::span<const float> weight;
  std::span<const float> bias;  // empty: no bias
};

// A kernel planned for one problem. Owns whatever plan prepared (packed weights, device buffers).
class PlannedConv {
 public:
  virtual ~PlannedConv() = default;
  // Scratch memory run() needs; the caller allocates it once, outside the timed loop.
  virtual std::size_t workspace_bytes() const { return 0; }
  // Bytes of weights this plan holds (packed, transformed or copied).
  virtual std::size_t weight_bytes() const = 0;
  // The timed forward. input: problem.input_elems() floats, NCHW; output: output_elems(), NCHW.
  // On the CPU these are host pointers; a GPU backend's kernels receive device pointers.
  virtual void run(const float* input, float* output, void* workspace) const = 0;
  // Why plan chose what it chose, for kernels that choose (cpu.auto); empty otherwise.
  virtual std::string explain() const { return {}; }
  // The id of the kernel that runs, for kernels that choose (cpu.auto); empty otherwise.
  virtual std::string chosen_kernel() const { return {}; }
  // Kernels that compute in another layout (NCHWc, oneDNN's blocked formats) convert the input
  // and output inside run, timed. So that nobody hides that cost, they also expose the
  // conversions alone: the harness times this separately and reports it beside the total.
  virtual bool changes_layout() const { return false; }
  // True for kernels that do fewer multiplies than the direct convolution (Winograd): convlab
  // counts the direct convolution's FLOPs, so their GFLOP/s are effective, not executed, and can
  // pass the machine's peak.
  virtual bool effective_flops() const { return false; }
  virtual void run_layout_changes_only(const float* /*input*/, float* /*output*/, void* /*workspace*/) const {}
};

struct KernelInfo {
  std::string_view id;       // <backend>.<NN>_<technique>[_<layout>], e.g. cpu.00_reference
  Backend backend;
  std::string_view summary;  // one line: the technique
  bool baseline;             // a production library listed for comparison, not one of ours
  bool deterministic;        // bit-identical outputs across runs at a fixed thread count
  // The kernel's accuracy contract, relative to FP32 summation in any order: each output must lie
  // within error_scale * gamma_m * sum|x*w| (+|bias|) of the exact result, m = C/g*R*S + 1,
  // gamma_m = m u / (1 - m u), u = 2^-24. 1 for kernels that only reorder the sum; larger for
  // transforms (Winograd) or reduced precision, with the reason beside the kernel's list entry.
  double error_scale;
  // Empty when the kernel supports the problem, else the reason it does not.
  std::string (*unsupported)(const ConvProblem&);
  // Throws InputError if the problem is unsupported or the weights have the wrong size.
  std::unique_ptr<PlannedConv> (*plan)(const ConvProblem&, const ConvWeights&, Epilogue);

  bool supports(const ConvProblem& p) const { return unsupported(p).empty(); }
};

// The oracles: the plain loops every other kernel is checked against, FP32 and int8. Neither
// competes on speed (not a candidate of cpu.auto, never the "best of ours").
inline constexpr std::string_view kFp32Oracle = "cpu.00_reference", kInt8Oracle = "cpu.20_int8_reference";
constexpr bool is_oracle(std::string_view id) { return id == kFp32Oracle || id == kInt8Oracle; }

// Every kernel built into this binary, in list order (backend, then teaching number).
std::span<const KernelInfo> all_kernels();
// nullptr when no kernel has this id.
const KernelInfo* find_kernel(std::string_view id);
// Kernels convlab knows but this binary left out (an optional library missing when it was
// configured): id and why, for `convlab kernels` and the error of a --kernel that names one.
struct AbsentKernel {
  std::string_view id, backend, why;
};
std::span<const AbsentKernel> absent_kernels();

// Checks the weights passed to plan against the problem; throws InputError naming the mismatch.
void check_weights(const ConvProblem& p, const ConvWeights& weights);

}  // namespace convlab
