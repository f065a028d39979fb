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
// Without VNNI the kernels on u8 x s8 quads take a faster path when every input byte is under 128
// (int8_simd.hpp's seven-bit path), so the fastest kernel depends on the data, which plan does not
// see: it measures twice, on full-range bytes and on bytes under 128, and keeps both choices where
// they differ, run() checking each input as the kernels do (--explain shows both measurements).
// Unlike FP32's, the choice never changes the outputs: every candidate gives the oracle's bytes.
// Remembered across runs in cpu.auto's file (auto_select.hpp; a resnet8 --fresh-process child spent
// 60 of its 80 ms measuring). --explain prints each layer's choice, its margin and every candidate's
// median.
// Run: build/convlab run --model resnet8 --precision int8 --kernel cpu.auto --batch 1,32 --per-layer
#include <omp.h>

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/auto_select.hpp"
#include "kernels/cpu/int8_simd.hpp"
#include "kernels/cpu/plan_timing.hpp"

namespace convlab::cpu {

namespace {

constexpr std::string_view kAutoId = "cpu.auto_int8";

bool is_candidate(const Int8KernelInfo& k, const ConvProblem& p) {
  return k.backend == Backend::cpu && !k.baseline && k.id != kAutoId && !is_oracle(k.id) && k.supports(p);
}

// The chosen plans: one, or (where the seven-bit path exists) one for inputs whose bytes are all
// under 128 and one for the others, run() telling them apart as the kernels themselves do.
class AutoInt8Conv final : public PlannedInt8Conv {
 public:
  AutoInt8Conv(std::unique_ptr<PlannedInt8Conv> chosen, std::string_view id, std::string explanation)
      : chosen_(std::move(chosen)), id_(id), explanation_(std::move(explanation)) {}
  AutoInt8Conv(std::unique_ptr<PlannedInt8Conv> seven_bit, std::unique_ptr<PlannedInt8Conv> full_range, std::string id,
               std::string explanation, std::int64_t input_elems, std::uint8_t zero_point)
      : chosen_(std::move(full_range)), seven_bit_(std::move(seven_bit)), id_(std::move(id)),
        explanation_(std::move(explanation)), input_elems_(input_elems), zero_point_(zero_point) {}
  std::size_t workspace_bytes() const override {
    return std::max(chosen_->workspace_bytes(), seven_bit_ ? seven_bit_->workspace_bytes() : 0);
  }
  std::size_t weight_bytes() const override { return chosen_->weight_bytes() + (seven_bit_ ? seven_bit_->weight_bytes() : 0); }
  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    plan_for(input).run(input, output, workspace);
  }
  // The layout changes of the full-range choice: a user timing them alone sees that kernel's.
  bool changes_layout() const override { return chosen_->changes_layout(); }
  void run_layout_changes_only(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    chosen_->run_layout_changes_only(input, output, workspace);
  }
  std::string chosen_kernel() const override { return id_; }
  std::string explain() const override {
    if (!seven_bit_) return with_plan_explanation(explanation_, id_, chosen_->explain());
    const std::size_t slash = id_.find(" / ");  // "<inputs under 128's kernel> / <the others'>"
    return with_plan_explanation(with_plan_explanation(explanation_, id_.substr(0, slash), seven_bit_->explain()),
                                 id_.substr(slash + 3), chosen_->explain());
  }

 private:
  const PlannedInt8Conv& plan_for(const std::uint8_t* input) const {
    return seven_bit_ && int8::seven_bit_input(input, input_elems_, zero_point_) ? *seven_bit_ : *chosen_;
  }

  std::unique_ptr<PlannedInt8Conv> chosen_, seven_bit_;  // seven_bit_: null when one plan serves all inputs
  std::string id_, explanation_;
  std::int64_t input_elems_ = 0;
  std::uint8_t zero_point_ = 0;
};

// "chose A, 12.0% ahead of B (medians of ...): A 0.100 ms; B 0.112 ms; C 0.300 ms, dropped after 3
// rounds", the candidates fastest first, as cpu.auto's --explain (without its error column: every
// candidate gives the oracle's bytes).
std::string explain_choice(const std::vector<const Int8KernelInfo*>& infos, const InterleavedTiming& t) {
  std::vector<std::size_t> order(infos.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::ranges::stable_sort(order, {}, [&](std::size_t i) { return std::pair{bool(t.dropped[i]), t.median[i]}; });
  std::string s = fmt::format("chose {}, {:.1f}% ahead of {} (medians of {} interleaved rounds, {:.0f} ms timing{})",
                              infos[order[0]]->id, 100 * (t.median[order[1]] / t.median[order[0]] - 1), infos[order[1]]->id,
                              t.rounds, t.spent_ms, remembered_note(t));
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

namespace {

// The choice remembered for this layer (auto_select.hpp), planned; null when there is none, or it
// names a kernel that cannot run the layer (then it is measured again).
std::unique_ptr<PlannedInt8Conv> plan_remembered(const AutoOptions& options, int threads, const ConvProblem& p,
                                                 const Int8ConvWeights& w, Epilogue e, bool split_at_128) {
  const auto cached = cached_int8_choice(options, threads, p, e, split_at_128);
  if (!cached) return nullptr;
  std::vector<const Int8KernelInfo*> kernels;  // one, or the one for inputs under 128 and the other
  for (std::size_t start = 0;;) {
    const std::size_t slash = cached->kernel.find(" / ", start);
    const Int8KernelInfo* k = find_int8_kernel(cached->kernel.substr(start, slash - start));
    if (k == nullptr || !is_candidate(*k, p)) return nullptr;
    kernels.push_back(k);
    if (slash == std::string::npos) break;
    start = slash + 3;
  }
  const std::string why = fmt::format("{} (remembered in {})", cached->explanation, options.cache_file);
  if (kernels.size() == 1) return std::make_unique<AutoInt8Conv>(kernels[0]->plan(p, w, e), kernels[0]->id, why);
  if (kernels.size() != 2 || !split_at_128) return nullptr;
  return std::make_unique<AutoInt8Conv>(kernels[0]->plan(p, w, e), kernels[1]->plan(p, w, e), cached->kernel, why,
                                        p.input_elems(), static_cast<std::uint8_t>(w.input.zero_point));
}

}  // namespace

std::unique_ptr<PlannedInt8Conv> auto_int8_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  // Where the kernels run a faster path on inputs under 128 (int8_simd.hpp), the fastest kernel
  // can differ between such inputs and the others: a second measurement on them, and a plan each.
  const auto zero_point = static_cast<std::uint8_t>(w.input.zero_point);
  const bool split_at_128 = int8::kSevenBitPath && zero_point < 128;
  const AutoOptions& options = auto_options();
  const int threads = omp_get_max_threads();
  if (auto remembered = plan_remembered(options, threads, p, w, e, split_at_128)) return remembered;
  std::vector<const Int8KernelInfo*> infos;
  std::vector<std::unique_ptr<PlannedInt8Conv>> plans;
  for (const Int8KernelInfo& k : all_int8_kernels())
    if (is_candidate(k, p)) infos.push_back(&k), plans.push_back(k.plan(p, w, e));
  if (plans.empty()) throw InputError(fmt::format("cpu.auto_int8: {}: {}", to_string(p), auto_int8_unsupported(p)));
  if (plans.size() == 1)
    return std::make_unique<AutoInt8Conv>(std::move(plans[0]), infos[0]->id,
                                          fmt::format("chose {} (the only candidate)", infos[0]->id));
  std::vector<const PlannedInt8Conv*> views;
  for (const auto& plan : plans) views.push_back(plan.get());
  TimingBuffers<PlannedInt8Conv> buffers(p, views);
  bool settled = true;  // every measurement's choice (time_interleaved): else none is remembered
  const auto choose = [&](std::string& explanation) {
    const auto time_ms = [&](std::size_t i) { return buffers.time_ms(*plans[i]); };
    for (std::size_t i = 0; i < plans.size(); ++i) time_ms(i);  // untimed: caches, pages, the thread pool
    const InterleavedTiming t = time_interleaved(plans.size(), time_ms);
    std::size_t best = 0;
    for (std::size_t i = 1; i < plans.size(); ++i)
      if (!t.dropped[i] && (t.dropped[best] || t.median[i] < t.median[best])) best = i;
    explanation = explain_choice(infos, t);
    settled = settled && t.settled;
    return best;
  };
  std::string full_why;
  const std::size_t full = choose(full_why);
  std::unique_ptr<PlannedInt8Conv> chosen;
  AutoChoice choice{std::string(infos[full]->id), full_why};
  if (!split_at_128) {
    chosen = std::make_unique<AutoInt8Conv>(std::move(plans[full]), infos[full]->id, full_why);
  } else {
    buffers.set_input_levels(128);
    std::string seven_why;
    const std::size_t seven = choose(seven_why);
    choice.explanation = fmt::format("inputs under 128: {}; other inputs: {}", seven_why, full_why);
    if (seven == full) {
      chosen = std::make_unique<AutoInt8Conv>(std::move(plans[full]), infos[full]->id, choice.explanation);
    } else {
      choice.kernel = fmt::format("{} / {}", infos[seven]->id, infos[full]->id);
      chosen = std::make_unique<AutoInt8Conv>(std::move(plans[seven]), std::move(plans[full]), choice.kernel,
                                              choice.explanation, p.input_elems(), zero_point);
    }
  }
  if (settled) remember_int8_choice(options, threads, p, e, split_at_128, choice);
  return chosen;
}

}  // namespace convlab::cpu

namespace convlab {

bool cpu_int8_seven_bit_path() { return cpu::int8::kSevenBitPath; }

}  // namespace convlab
