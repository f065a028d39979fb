// Timing planned kernels inside plan, for the kernels that choose by measuring (cpu.auto between
// kernels, cpu.02 between register tiles): buffers sized for all of them, and one timed run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"

namespace convlab::cpu {

// An input (a fixed pattern: timing does not depend on the values), an output and a workspace
// large enough for every kernel in `plans`, all planned for problem p.
struct PlanTimingBuffers {
  std::unique_ptr<float[], detail::AlignedFree> input, output, workspace;

  PlanTimingBuffers(const ConvProblem& p, const std::vector<const PlannedConv*>& plans)
      : input(aligned_floats(static_cast<std::size_t>(p.input_elems()))),
        output(aligned_floats(static_cast<std::size_t>(p.output_elems()))) {
    for (std::int64_t i = 0; i < p.input_elems(); ++i) input[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    std::size_t bytes = 0;
    for (const PlannedConv* plan : plans) bytes = std::max(bytes, plan->workspace_bytes());
    workspace = aligned_floats((bytes + sizeof(float) - 1) / sizeof(float));
  }

  // One run of `plan`, in milliseconds (into `out`, default the shared output).
  double time_ms(const PlannedConv& plan, float* out = nullptr) const {
    const auto start = std::chrono::steady_clock::now();
    plan.run(input.get(), out != nullptr ? out : output.get(), workspace.get());
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
};

inline double median_of(std::vector<double> v) {
  std::ranges::sort(v);
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace convlab::cpu
