// `conv --precision int8`: an int8 kernel prepared for timing, checked against the int8 oracle.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "bench/harness/conv_bench.hpp"
#include "bench/harness/int8_conv_data.hpp"
#include "bench/harness/prepared_conv.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/reference.hpp"

namespace convlab {

namespace {

struct PreparedInt8 final : PreparedConv {
  Int8ConvData data;
  std::unique_ptr<PlannedInt8Conv> planned;
  std::unique_ptr<float[], detail::AlignedFree> workspace;
  mutable std::vector<std::uint8_t> output;

  void run() const override {
    planned->run(data.input.data(), output.data(), workspace.get());
  }
  bool changes_layout() const override { return planned->changes_layout(); }
  void run_layout_changes_only() const override {
    planned->run_layout_changes_only(data.input.data(), output.data(), workspace.get());
  }
};

// Every output of small problems, an evenly spread sample of large ones, as for FP32.
ErrorStats check_against_int8_reference(const ConvProblem& p, const Int8ConvData& d, Activation activation,
                                        const std::uint8_t* out) {
  const Requantization requantize = make_requantization(d.weights(), p.k, activation);
  return compare_outputs(p, [&](std::int64_t i, std::int64_t n, std::int64_t k, std::int64_t y, std::int64_t x) {
    const std::int32_t acc = cpu::int8_reference_accumulator(p, d.input.data(), d.weight, d.input_q.zero_point, n, k, y, x);
    const int ref = requantize(acc, k), got = out[i];
    return std::pair{static_cast<double>(std::abs(got - ref)), static_cast<double>(ref - d.output_q.zero_point)};
  });
}

}  // namespace

std::unique_ptr<PreparedConv> prepare_int8(const Int8KernelInfo& info, const ConvProblem& p, std::uint64_t seed,
                                           Device& cpu, Result& r) {
  auto k = std::make_unique<PreparedInt8>();
  k->data = make_int8_conv_data(p, seed);
  k->planned = info.plan(p, k->data.weights(), Epilogue{});
  k->workspace = aligned_floats((k->planned->workspace_bytes() + sizeof(float) - 1) / sizeof(float));
  k->output.resize(static_cast<std::size_t>(p.output_elems()));
  k->device = &cpu;
  r.model_memory = {.weights_bytes = k->planned->weight_bytes(),
                    .activations_bytes = static_cast<std::size_t>(p.input_elems() + p.output_elems()),
                    .workspace_bytes = k->planned->workspace_bytes()};
  k->run();  // the check comes before any timing
  r.accuracy = check_against_int8_reference(p, k->data, Activation::none, k->output.data());
  if (!(r.accuracy->max_abs <= info.max_quanta))
    r.error = fmt::format("INVALID: differs from cpu.20_int8_reference by up to {:.0f} quanta (tolerance {}) over {} "
                          "outputs checked", r.accuracy->max_abs, info.max_quanta, r.accuracy->checked);
  return k;
}

}  // namespace convlab
