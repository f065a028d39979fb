#include "bench/harness/forward_threads.hpp"

#include <omp.h>

#include <chrono>

#include <fmt/format.h>

#include "bench/harness/model_bench.hpp"
#include "kernels/cpu/auto_select.hpp"

namespace convlab {

namespace {

// One thread is tried only where the forward on all of them is this short: past it the threads'
// cost, a few microseconds a layer, could not be half of it (lab-cnn at batch 8, 0.17 ms on two
// threads, stayed on two).
constexpr double kOneThreadTrialMs = 0.5;

std::string threads_name(int threads) { return threads == 1 ? "1 thread" : fmt::format("{} threads", threads); }

template <class Plan>
double forward_ms(Plan& plan, int threads) {
  const cpu::ScopedMaxThreads scope(threads);
  const auto start = std::chrono::steady_clock::now();
  plan.forward();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The choice, for either plan type: make(threads) plans the network for that many threads (its
// input filled). `chooses`: the kernel is an auto; `what` names the forward in the cache.
template <class Plan, class Make>
PlannedForwardOf<Plan> choose_threads(bool chooses, const std::string& what, Make make) {
  const int all = omp_get_max_threads();
  const auto planned = [&make](int threads) {
    const cpu::ScopedMaxThreads scope(threads);  // the kernels plan for these threads
    return make();
  };
  if (!chooses || all == 1) return {planned(all), all, {}};
  const cpu::AutoOptions& options = cpu::auto_options();
  if (const auto cached = cpu::cached_choice(options, all, what)) {
    for (const int threads : {1, all})  // a line naming anything else is measured again
      if (cached->kernel == threads_name(threads))
        return {planned(threads), threads, fmt::format("{} (remembered in {})", cached->explanation, options.cache_file)};
  }
  PlannedForwardOf<Plan> chosen{planned(all), all, {}};
  forward_ms(*chosen.plan, all);  // untimed: pages, caches, the thread pool
  const double on_all =
      cpu::median_of({forward_ms(*chosen.plan, all), forward_ms(*chosen.plan, all), forward_ms(*chosen.plan, all)});
  if (on_all >= kOneThreadTrialMs) {
    chosen.why = fmt::format("chose {}: {:.3f} ms, too long for 1 thread to win (tried under {} ms)", threads_name(all),
                             on_all, kOneThreadTrialMs);
  } else {
    auto one = planned(1);
    const cpu::InterleavedTiming t =
        cpu::time_interleaved(2, [&](std::size_t i) { return i == 0 ? forward_ms(*chosen.plan, all) : forward_ms(*one, 1); });
    if (!t.dropped[1] && (t.dropped[0] || t.median[1] < t.median[0])) chosen.plan = std::move(one), chosen.threads = 1;
    chosen.why = fmt::format("chose {}: {:.3f} ms on 1 thread, {:.3f} ms on {} (medians of {} interleaved rounds, {:.0f} ms timing{})",
                             threads_name(chosen.threads), t.median[1], t.median[0], threads_name(all), t.rounds, t.spent_ms,
                             cpu::remembered_note(t));
    if (!t.settled) return chosen;
  }
  cpu::remember_choice(options, all, what, {threads_name(chosen.threads), chosen.why});
  return chosen;
}

}  // namespace

PlannedForward plan_forward(const Network& net, const std::string& model, std::int64_t batch, const std::string& kernel,
                            std::uint64_t seed) {
  return choose_threads<NetworkPlan>(kernel == "cpu.auto", fmt::format("forward {} batch {}", model, batch), [&] {
    auto plan = std::make_shared<NetworkPlan>(net, batch, KernelSelection{.default_kernel = kernel});
    fill_model_input(net, plan->input().span(), seed);
    return plan;
  });
}

PlannedInt8Forward plan_int8_forward(const QuantizedNetwork& q, const std::string& model, std::int64_t batch,
                                     const std::string& kernel, std::uint64_t seed) {
  return choose_threads<Int8NetworkPlan>(kernel == "cpu.auto_int8", fmt::format("forward {} int8 batch {}", model, batch), [&] {
    auto plan = std::make_shared<Int8NetworkPlan>(q, batch, kernel);
    fill_model_input(q.network(), plan->input().span(), seed);
    return plan;
  });
}

}  // namespace convlab
