#include "bench/harness/harness.hpp"

#include <atomic>

#include <fmt/format.h>

#include "bench/harness/interrupt.hpp"
#include "bench/harness/memory.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

void CpuDevice::synchronize() { std::atomic_thread_fence(std::memory_order_seq_cst); }

namespace {

// One timed run: the synchronisation on both sides makes host time cover the work itself, not
// its submission.
void timed_run(const Workload& w, Clock& clock, double& host_ms, double* device_ms) {
  Device& device = *w.device;
  const bool device_timer = device.has_device_timer();
  device.synchronize();
  const std::int64_t t0 = clock.now_ns();
  if (device_timer) device.mark_start();
  w.run();
  if (device_timer) device.mark_stop();
  device.synchronize();
  const std::int64_t t1 = clock.now_ns();
  host_ms = static_cast<double>(t1 - t0) * 1e-6;
  if (device_timer && device_ms != nullptr) *device_ms = device.elapsed_ms();
}

// Untimed runs of w, one at least, until settle_ms have passed.
void settle(const Workload& w, double settle_ms, Clock& clock) {
  const std::int64_t start = clock.now_ns();
  do {
    w.run();
    w.device->synchronize();
  } while (static_cast<double>(clock.now_ns() - start) * 1e-6 < settle_ms);
}

// The rounds of measure_interleaved, every workload in them.
std::vector<Measurement> measure_rounds(const std::vector<Workload>& workloads, const Protocol& protocol, Clock& clock) {
  if (protocol.trials < 1) throw InputError(fmt::format("trials {} must be at least 1", protocol.trials));
  if (protocol.warmup < 0) throw InputError(fmt::format("warmup {} must not be negative", protocol.warmup));
  if (!(protocol.settle_ms >= 0)) throw InputError(fmt::format("settle_ms {} must not be negative", protocol.settle_ms));
  const std::size_t count = workloads.size(), trials = static_cast<std::size_t>(protocol.trials);
  std::vector<Measurement> m(count);
  for (std::size_t i = 0; i < count; ++i) {  // no allocation inside the loops
    m[i].samples_ms.resize(trials);
    if (workloads[i].device->has_device_timer()) m[i].device_samples_ms.resize(trials);
  }
  auto device_ms = [&](std::size_t i, std::size_t trial) {
    return m[i].device_samples_ms.empty() ? nullptr : &m[i].device_samples_ms[trial];
  };

  const std::uint64_t rss_before = current_rss_bytes();
  const bool lifetime_peak = !reset_peak_rss();
  for (std::size_t i = 0; i < count; ++i) {
    m[i].device_memory_before = workloads[i].device->memory();
    timed_run(workloads[i], clock, m[i].cold_ms, m[i].device_samples_ms.empty() ? nullptr : &m[i].cold_device_ms);
  }
  // A SIGINT is honoured between runs (a flag read, outside the timed region).
  for (int r = 0; r < protocol.warmup; ++r)
    for (const Workload& w : workloads) {
      throw_if_interrupted();
      w.run();
    }
  for (const Workload& w : workloads) w.device->synchronize();
  for (std::size_t t = 0; t < trials; ++t)
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t i = (t + k) % count;
      throw_if_interrupted();
      // With others in between, untimed runs first (harness.hpp: settle_ms): the trial then
      // finds the machine as a trial that follows its own previous trial does.
      if (count > 1) settle(workloads[i], protocol.settle_ms, clock);
      timed_run(workloads[i], clock, m[i].samples_ms[t], device_ms(i, t));
    }
  const std::uint64_t rss_after = current_rss_bytes(), peak = peak_rss_bytes();
  for (std::size_t i = 0; i < count; ++i) {
    m[i].rss_before_bytes = rss_before;
    m[i].rss_after_bytes = rss_after;
    m[i].peak_rss_bytes = peak;
    m[i].peak_rss_is_process_lifetime = lifetime_peak;
    m[i].device_memory = workloads[i].device->memory();
  }
  return m;
}

}  // namespace

std::vector<Measurement> measure_interleaved(const std::vector<Workload>& workloads, const Protocol& protocol,
                                             Clock& clock) {
  std::vector<Workload> rounds;
  for (const Workload& w : workloads)
    if (!w.alone) rounds.push_back(w);
  std::vector<Measurement> in_rounds = measure_rounds(rounds, protocol, clock), m;
  std::size_t next = 0;
  for (const Workload& w : workloads)
    m.push_back(w.alone ? std::move(measure_rounds({w}, protocol, clock).front()) : std::move(in_rounds[next++]));
  return m;
}

Measurement measure(const std::function<void()>& run, Device& device, const Protocol& protocol, Clock& clock) {
  return std::move(measure_interleaved({{run, &device}}, protocol, clock).front());
}

}  // namespace convlab
