// cpu.auto: the best of our CPU kernels for each layer, chosen by measuring.
//
// What it changes: nothing in the arithmetic. Plan asks every other kernel of ours that supports
// the layer (the oracle and the baselines excluded) to plan the same problem, runs each on the
// layer's real shape (one untimed run, then the median of three timed runs) and keeps the
// fastest. Run is the chosen kernel's run.
// Why: no kernel wins everywhere. Direct convolution wins on wide 3x3 layers, Winograd on some
// stride-1 3x3 layers, the depthwise and pointwise kernels on their own shapes, im2col on odd
// ones; measuring at plan time on this machine, at this batch size and thread count, beats any
// fixed rule, and the plan is outside the timed region anyway.
// Cost: plan time grows with the number of candidates (a few runs each). The choice depends on
// timing, so two processes can choose differently on a noisy machine: cpu.auto is listed as not
// deterministic, although each plan's runs are.
// Benchmark: build/convlab run --model lab-cnn --kernel cpu.auto --batch 1,32 --explain
#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"

namespace convlab::cpu {

namespace {

constexpr std::string_view kAutoId = "cpu.auto";
constexpr int kTimedRuns = 3;

bool is_candidate(const KernelInfo& k, const ConvProblem& p) {
  const KernelInfo& self = *find_kernel(kAutoId);
  return k.backend == Backend::cpu && !k.baseline && k.id != kAutoId && k.id != "cpu.00_reference" &&
         k.error_scale <= self.error_scale && k.supports(p);
}

double median_ms(const PlannedConv& kernel, const float* input, float* output, void* workspace) {
  kernel.run(input, output, workspace);  // untimed: caches, pages, thread pool
  std::vector<double> ms;
  for (int i = 0; i < kTimedRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    kernel.run(input, output, workspace);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[kTimedRuns / 2];
}

class AutoConv final : public PlannedConv {
 public:
  AutoConv(std::unique_ptr<PlannedConv> chosen, std::string_view chosen_id, std::string explanation)
      : chosen_(std::move(chosen)), chosen_id_(chosen_id), explanation_(std::move(explanation)) {}
  std::size_t workspace_bytes() const override { return chosen_->workspace_bytes(); }
  std::size_t weight_bytes() const override { return chosen_->weight_bytes(); }
  void run(const float* input, float* output, void* workspace) const override { chosen_->run(input, output, workspace); }
  std::string explain() const override { return explanation_; }
  std::string chosen_kernel() const override { return chosen_id_; }
  // The chosen kernel's layout changes are cpu.auto's, timed apart as when it runs alone.
  bool changes_layout() const override { return chosen_->changes_layout(); }
  bool effective_flops() const override { return chosen_->effective_flops(); }
  void run_layout_changes_only(const float* input, float* output, void* workspace) const override {
    chosen_->run_layout_changes_only(input, output, workspace);
  }

 private:
  std::unique_ptr<PlannedConv> chosen_;
  std::string chosen_id_;
  std::string explanation_;
};

}  // namespace

std::string auto_select_unsupported(const ConvProblem& p) {
  for (const KernelInfo& k : all_kernels())
    if (is_candidate(k, p)) return {};
  return "no other CPU kernel of ours supports it";
}

std::unique_ptr<PlannedConv> auto_select_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  check_weights(p, w);
  struct Candidate {
    std::string_view id;
    std::unique_ptr<PlannedConv> planned;
    double ms;
  };
  std::vector<Candidate> candidates;
  for (const KernelInfo& k : all_kernels())
    if (is_candidate(k, p)) candidates.push_back({k.id, k.plan(p, w, e), 0.0});
  if (candidates.empty()) throw InputError(fmt::format("cpu.auto: {}: {}", to_string(p), auto_select_unsupported(p)));

  if (candidates.size() > 1) {  // one candidate needs no measuring
    auto input = aligned_floats(static_cast<std::size_t>(p.input_elems()));
    auto output = aligned_floats(static_cast<std::size_t>(p.output_elems()));
    for (std::int64_t i = 0; i < p.input_elems(); ++i) input[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    std::size_t workspace_bytes = 0;
    for (const Candidate& c : candidates) workspace_bytes = std::max(workspace_bytes, c.planned->workspace_bytes());
    auto workspace = aligned_floats((workspace_bytes + sizeof(float) - 1) / sizeof(float));
    for (Candidate& c : candidates) c.ms = median_ms(*c.planned, input.get(), output.get(), workspace.get());
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.ms < b.ms; });
  }
  std::string explanation = fmt::format("chose {}", candidates.front().id);
  if (candidates.size() == 1) explanation += " (the only candidate)";
  for (std::size_t i = 0; i < candidates.size() && candidates.size() > 1; ++i)
    explanation += fmt::format("{} {} {:.3f} ms", i == 0 ? ":" : ",", candidates[i].id, candidates[i].ms);
  return std::make_unique<AutoConv>(std::move(candidates.front().planned), candidates.front().id,
                                    std::move(explanation));
}

}  // namespace convlab::cpu
