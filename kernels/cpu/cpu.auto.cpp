// cpu.auto: the best of our CPU kernels for each layer, chosen by measuring.
//
// What it changes: nothing in the arithmetic. Plan asks every other kernel of ours that supports
// the layer (the oracle and the baselines excluded; with strict accuracy, Winograd F(4x4) too) to
// plan the same problem and times them on the layer's real shape, each on its own buffers (as
// `conv` times kernels), interleaved: each round runs every candidate once, in rotated order, so a
// busy spell of a shared machine falls on all of them. It keeps the lowest median; run is the
// chosen kernel's run.
// Why: no kernel wins everywhere (direct on wide 3x3 layers, Winograd on some stride-1 ones, the
// depthwise and pointwise kernels on theirs), and the winner moves with the CPU, the batch and
// the threads: measuring here beats any fixed rule, and plan is outside the timed region.
// Robust on a noisy machine: at least 5 rounds and 20 ms of timing, more for a close call or a
// lead the fastest runs contradict (plan_timing.hpp, time_interleaved, shared with cpu.auto_int8);
// a choice they still contradict is not remembered.
// Cost: that measuring, reported in --explain with the medians and the margin. The choice is
// remembered per (machine, build, threads, problem) in a file (auto_select.hpp), so the next run
// plans without measuring. Not deterministic: two measurements can choose differently.
// In a network it also chooses the forward's threads, all or one (bench/harness/forward_threads.hpp).
// Measured: bench/RESULTS.md, "cpu.auto against the best kernel".
// Run: build/convlab run --model lab-cnn --kernel cpu.auto --batch 1,32 --explain
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/common/tensor.hpp"
#include "kernels/cpu/auto_select.hpp"
#include "kernels/cpu/plan_timing.hpp"

namespace convlab::cpu {

namespace {

constexpr std::string_view kAutoId = "cpu.auto";
constexpr double kStrictErrorScale = 8;  // Winograd F(2x2)'s bound; F(4x4)'s is 436 (cpu_kernels.inc)

bool is_candidate(const KernelInfo& k, const ConvProblem& p, bool strict) {
  return k.backend == Backend::cpu && !k.baseline && k.id != kAutoId && !is_oracle(k.id) &&
         (!strict || k.error_scale <= kStrictErrorScale) && k.supports(p);
}

struct Candidate {
  const KernelInfo* info;
  std::unique_ptr<PlannedConv> planned;
  std::vector<double> ms;
  double median = 0;
  bool dropped = false;
  double difference = -1;  // normalised difference of its output from the first exact kernel's
};

double normalised_difference(const float* got, const float* ref, std::int64_t n) {
  double diff = 0, norm = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    diff += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    norm += double(ref[i]) * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

struct Measurement {
  int rounds = 0;
  double spent_ms = 0;
  const KernelInfo* exact = nullptr;  // whose output the others' differences are from
  bool settled = true;                // InterleavedTiming::settled: else the choice is not remembered
};

// Times the candidates interleaved (plan_timing.hpp) until the leader is clear, or the budget is
// spent. Afterwards the candidates are sorted, fastest first.
Measurement measure(std::vector<Candidate>& candidates, const ConvProblem& p) {
  std::vector<const PlannedConv*> plans;
  for (const Candidate& c : candidates) plans.push_back(c.planned.get());
  const PlanTimingBuffers buffers(p, plans);

  // One untimed run each (caches, pages, the thread pool), which also gives each output's
  // difference from the first kernel that only reorders the FP32 sum (its output stays in its
  // own buffer: plan_timing.hpp).
  const Candidate* exact = nullptr;
  for (Candidate& c : candidates) {
    buffers.time_ms(*c.planned);
    if (exact == nullptr && c.info->error_scale <= 1.0) exact = &c;
    else if (exact != nullptr)
      c.difference = normalised_difference(buffers.output(*c.planned), buffers.output(*exact->planned), p.output_elems());
  }
  const KernelInfo* exact_info = exact != nullptr ? exact->info : nullptr;  // before the sort moves them
  const InterleavedTiming t = time_interleaved(candidates.size(), [&](std::size_t i) { return buffers.time_ms(*candidates[i].planned); });
  for (std::size_t i = 0; i < candidates.size(); ++i)
    candidates[i].ms = t.ms[i], candidates[i].median = t.median[i], candidates[i].dropped = t.dropped[i];
  std::ranges::stable_sort(candidates, {}, &Candidate::median);
  return {t.rounds, t.spent_ms, exact_info, t.settled};
}

std::string explain_measurement(const std::vector<Candidate>& c, const Measurement& m, bool strict) {
  std::string s = fmt::format("chose {}", c[0].info->id);
  if (c.size() == 1) return s + " (the only candidate" + (strict ? " with strict accuracy)" : ")");
  s += fmt::format(", {:.1f}% ahead of {} (medians of {} interleaved rounds, {:.0f} ms timing{}{})",
                   100 * (c[1].median / c[0].median - 1), c[1].info->id, m.rounds, m.spent_ms,
                   strict ? "; strict accuracy" : "", remembered_note(m.settled));
  if (m.exact != nullptr) s += fmt::format("; outputs' normalised difference from {}'s", m.exact->id);
  for (std::size_t i = 0; i < c.size(); ++i) {
    s += fmt::format("{} {} {:.3f} ms", i == 0 ? ":" : ";", c[i].info->id, c[i].median);
    if (c[i].dropped) s += fmt::format(", dropped after {} rounds", c[i].ms.size());
    s += fmt::format(", error bound {:g}x FP32's", c[i].info->error_scale);
    if (c[i].difference >= 0) s += fmt::format(", difference {:.1e}", c[i].difference);
  }
  return s;
}

class AutoConv final : public PlannedConv {
 public:
  AutoConv(std::unique_ptr<PlannedConv> chosen, std::string_view chosen_id, std::string explanation)
      : chosen_(std::move(chosen)), chosen_id_(chosen_id), explanation_(std::move(explanation)) {}
  std::size_t workspace_bytes() const override { return chosen_->workspace_bytes(); }
  std::size_t weight_bytes() const override { return chosen_->weight_bytes(); }
  void run(const float* input, float* output, void* workspace) const override { chosen_->run(input, output, workspace); }
  std::string explain() const override { return with_plan_explanation(explanation_, chosen_id_, chosen_->explain()); }
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
    if (is_candidate(k, p, false)) return {};
  return "no other CPU kernel of ours supports it";
}

std::unique_ptr<PlannedConv> auto_select_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  check_weights(p, w);
  const AutoOptions& options = auto_options();
  const int threads = omp_get_max_threads();
  if (const auto cached = cached_choice(options, threads, p, e)) {
    const KernelInfo* k = find_kernel(cached->kernel);
    if (k != nullptr && is_candidate(*k, p, options.strict_accuracy))
      return std::make_unique<AutoConv>(k->plan(p, w, e), k->id,
                                        fmt::format("{} (remembered in {})", cached->explanation, options.cache_file));
  }
  std::vector<Candidate> candidates;
  for (const KernelInfo& k : all_kernels())
    if (is_candidate(k, p, options.strict_accuracy)) candidates.push_back({&k, k.plan(p, w, e)});
  if (candidates.empty())
    throw InputError(fmt::format("cpu.auto: {}: {}", to_string(p),
                                 options.strict_accuracy ? "no CPU kernel of ours with strict accuracy supports it"
                                                         : auto_select_unsupported(p)));
  const Measurement m = candidates.size() > 1 ? measure(candidates, p) : Measurement{};
  AutoChoice choice{std::string(candidates[0].info->id), explain_measurement(candidates, m, options.strict_accuracy)};
  if (candidates.size() > 1 && m.settled) remember_choice(options, threads, p, e, choice);
  return std::make_unique<AutoConv>(std::move(candidates[0].planned), candidates[0].info->id,
                                    std::move(choice.explanation));
}

}  // namespace convlab::cpu
