// cpu.auto_int8: the fastest of our int8 CPU kernels for each layer, chosen by measuring, as
// cpu.auto does for FP32 (`--kernel cpu.auto` with --precision int8 runs it).
//
// Plan asks every other int8 kernel of ours that supports the layer (the oracle and the
// baselines excluded) to plan it, times them on the layer's real shape and weights, interleaved
// (plan_timing.hpp, time_interleaved: the FP32 cpu.auto's rules), and keeps the lowest median.
// Why measure: the same multiplies cost differently by layer and CPU. With VNNI cpu.24 (pixels in
// lanes, no transposes) wins the first, pointwise and wide 3 x 3 layers and cpu.23 the strided and
// 8 x 8 ones (Ice Lake, 2026-12-03); without VNNI cpu.23's two-vpmaddwd form and cpu.21's int16
// pairs trade places. Depthwise layers have cpu.22 and cpu.25.
// Unlike FP32's, the choice never changes the outputs: every candidate gives the oracle's bytes.
// Not remembered across runs (int8 plans are few and quick to time). --explain prints each layer's
// choice, its margin and every candidate's median.
// Run: build/convlab run --model resnet8 --precision int8 --kernel cpu.auto --batch 1,32 --per-layer
#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/plan_timing.hpp"

namespace convlab::cpu {

namespace {

constexpr std::string_view kAutoId = "cpu.auto_int8";

bool is_candidate(const Int8KernelInfo& k, const ConvProblem& p) {
  return k.backend == Backend::cpu && !k.baseline && k.id != kAutoId && !is_oracle(k.id) && k.supports(p);
}

class AutoInt8Conv final : public PlannedInt8Conv {
 public:
  AutoInt8Conv(std::unique_ptr<PlannedInt8Conv> chosen, std::string_view id, std::string explanation)
      : chosen_(std::move(chosen)), id_(id), explanation_(std::move(explanation)) {}
  std::size_t workspace_bytes() const override { return chosen_->workspace_bytes(); }
  std::size_t weight_bytes() const override { return chosen_->weight_bytes(); }
  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    chosen_->run(input, output, workspace);
  }
  bool changes_layout() const override { return chosen_->changes_layout(); }
  void run_layout_changes_only(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    chosen_->run_layout_changes_only(input, output, workspace);
  }
  std::string chosen_kernel() const override { return id_; }
  std::string explain() const override { return explanation_; }

 private:
  std::unique_ptr<PlannedInt8Conv> chosen_;
  std::string id_, explanation_;
};

// "chose A, 12.0% ahead of B (medians of ...): A 0.100 ms; B 0.112 ms; C 0.300 ms, dropped after 3
// rounds", the candidates fastest first, as cpu.auto's --explain (without its error column: every
// candidate gives the oracle's bytes).
std::string explain_choice(const std::vector<const Int8KernelInfo*>& infos, const InterleavedTiming& t) {
  std::vector<std::size_t> order(infos.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::ranges::stable_sort(order, {}, [&](std::size_t i) { return std::pair{bool(t.dropped[i]), t.median[i]}; });
  std::string s = fmt::format("chose {}, {:.1f}% ahead of {} (medians of {} interleaved rounds, {:.0f} ms timing)",
                              infos[order[0]]->id, 100 * (t.median[order[1]] / t.median[order[0]] - 1), infos[order[1]]->id,
                              t.rounds, t.spent_ms);
  for (std::size_t j = 0; j < order.size(); ++j) {
    const std::size_t i = order[j];
    s += fmt::format("{} {} {:.3f} ms", j == 0 ? ":" : ";", infos[i]->id, t.median[i]);
    if (t.dropped[i]) s += fmt::format(", dropped after {} rounds", t.ms[i].size());
  }
  return s;
}

}  // namespace

std::string auto_int8_unsupported(const ConvProblem& p) {
  for (const Int8KernelInfo& k : all_int8_kernels())
    if (is_candidate(k, p)) return {};
  return "no other int8 CPU kernel of ours supports it";
}

std::unique_ptr<PlannedInt8Conv> auto_int8_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  std::vector<const Int8KernelInfo*> infos;
  std::vector<std::unique_ptr<PlannedInt8Conv>> plans;
  for (const Int8KernelInfo& k : all_int8_kernels())
    if (is_candidate(k, p)) infos.push_back(&k), plans.push_back(k.plan(p, w, e));
  if (plans.empty()) throw InputError(fmt::format("cpu.auto_int8: {}: {}", to_string(p), auto_int8_unsupported(p)));
  std::size_t best = 0;
  std::string explanation = fmt::format("chose {} (the only candidate)", infos[0]->id);
  if (plans.size() > 1) {
    std::vector<const PlannedInt8Conv*> views;
    for (const auto& plan : plans) views.push_back(plan.get());
    const TimingBuffers<PlannedInt8Conv> buffers(p, views);
    const auto time_ms = [&](std::size_t i) { return buffers.time_ms(*plans[i]); };
    for (std::size_t i = 0; i < plans.size(); ++i) time_ms(i);  // untimed: caches, pages, the thread pool
    const InterleavedTiming t = time_interleaved(plans.size(), time_ms);
    for (std::size_t i = 1; i < plans.size(); ++i)
      if (!t.dropped[i] && (t.dropped[best] || t.median[i] < t.median[best])) best = i;
    explanation = explain_choice(infos, t);
  }
  return std::make_unique<AutoInt8Conv>(std::move(plans[best]), infos[best]->id, std::move(explanation));
}

}  // namespace convlab::cpu
