// A kernel's variants for one layer, which compute the same sums in the same order and differ only
// in speed (cpu.02's and cpu.23's register tiles; cpu.02's input read in place or reordered): plan
// times them on a sample of the batch and keeps the fastest, remembered in cpu.auto's file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"
#include "kernels/cpu/auto_select.hpp"
#include "kernels/cpu/plan_timing.hpp"

namespace convlab::cpu {

// Layers of fewer FLOPs per image than this (a few microseconds) take the first variant unmeasured:
// the measurement (20 ms at least) would cost more than any difference could repay. It was 2e7,
// which left ImageNet's 1 x 1 layers of 7 x 7 and 14 x 14 at batch 1 on cpu.02's 4 x 7, where 2 x 14
// is 1.4x faster on a Zen 5 VM (mb1ic960ih7oc160oh7kh1: 0.92x -> 1.41x oneDNN).
constexpr double kVariantChoiceMinFlops = 1e6;

// The images per thread plan times the variants on, where the batch has them. One (the first form)
// hid what a batch does to a tile: on resnet18's layer4.0.conv1 (Zen 5, six alternating rounds
// against oneDNN) cpu.02's 3 x 9 took 1.02x 2 x 14's time on 2 images, 1.03x on 4, 1.08x on 8 and
// 1.09x on 32, and plan chose it in one run of three at batch 32 (0.89x oneDNN where 2 x 14 ran
// 0.99-1.01x).
constexpr std::int64_t kPlanImagesPerThread = 4;

inline ConvProblem variant_sample(const ConvProblem& p, int threads) {
  return p.with_batch(std::min<std::int64_t>(p.n, kPlanImagesPerThread * threads));
}

// Whether plan measures `variants` of p or takes the first.
inline bool worth_measuring(std::size_t variants, const ConvProblem& p, int threads) {
  const ConvProblem sample = variant_sample(p, threads);
  return variants > 1 && sample.flops() >= kVariantChoiceMinFlops * static_cast<double>(sample.n);
}

// Plans each variant on variant_sample(p) with make(problem, variant), a std::unique_ptr to the
// kernel's plan class, which has name() (the variant in the explanation) and set_explanation();
// times them with the autos' interleaved measurement (plan_timing.hpp: each on its own buffers,
// each timed run after an untimed one, at least 5 rounds and 20 ms, close calls re-checked) and
// returns the fastest median's plan for p, explained. Three cold rounds were too few: with a
// 20-40% lead for cpu.02's 2 x 14 on ImageNet's 1 x 1 layers at batch 1, one busy spell in plan
// chose 4 x 7 in one run of two (mb1ic960ih7oc320oh7kh1: 0.144 ms, not 0.096).
// `what` names the choice in cpu.auto's file (auto_select.hpp), remembered_as(variant) its line's
// answer: a second run, or a --fresh-process child, plans without the 10-20 ms a layer of timing.
template <class Variant, class Make, class RememberedAs>
auto plan_fastest_variant(const ConvProblem& p, const std::vector<Variant>& variants, int threads, const std::string& what,
                          Make make, RememberedAs remembered_as) {
  using Plan = typename decltype(make(p, variants.front()))::element_type;
  using Timed = std::conditional_t<std::is_base_of_v<PlannedInt8Conv, Plan>, PlannedInt8Conv, PlannedConv>;
  const AutoOptions& options = auto_options();
  if (const auto cached = cached_choice(options, threads, what))
    for (const Variant& v : variants)
      if (remembered_as(v) == cached->kernel) {
        auto chosen = make(p, v);
        chosen->set_explanation(fmt::format("{} (remembered in {})", cached->explanation, options.cache_file));
        return chosen;
      }
  const ConvProblem sample = variant_sample(p, threads);
  std::vector<decltype(make(p, variants.front()))> plans;
  std::vector<const Timed*> views;
  for (const Variant& v : variants) {
    plans.push_back(make(sample, v));
    views.push_back(plans.back().get());
  }
  const TimingBuffers<Timed> buffers(sample, views);
  const InterleavedTiming t = time_interleaved(plans.size(), [&](std::size_t i) { return buffers.time_ms(*plans[i]); });
  std::size_t best = 0;
  std::string timings;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!t.dropped[i] && (t.dropped[best] || t.median[i] < t.median[best])) best = i;
    timings += fmt::format("{}{} {:.3f} ms{}", i == 0 ? "" : ", ", plans[i]->name(), t.median[i], t.dropped[i] ? " (dropped)" : "");
  }
  auto chosen = make(p, variants[best]);
  const std::string why = fmt::format("register tile {} (medians of {} interleaved rounds on {} image(s), {:.0f} ms: {}){}",
                                      plans[best]->name(), t.rounds, sample.n, t.spent_ms, timings, remembered_note(t));
  if (t.settled) remember_choice(options, threads, what, {remembered_as(variants[best]), why});
  chosen->set_explanation(why);
  return chosen;
}

}  // namespace convlab::cpu
