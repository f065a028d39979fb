#include "bench/harness.hpp"

#include <atomic>

#include <fmt/format.h>

#include "bench/interrupt.hpp"
#include "bench/memory.hpp"
#include "kernels/common/error.hpp"

namespace convlab {

void CpuDevice::synchronize() { std::atomic_thread_fence(std::memory_order_seq_cst); }

Measurement measure(const std::function<void()>& run, Device& device, const Protocol& protocol, Clock& clock) {
  if (protocol.trials < 1) throw InputError(fmt::format("trials {} must be at least 1", protocol.trials));
  if (protocol.warmup < 0) throw InputError(fmt::format("warmup {} must not be negative", protocol.warmup));
  Measurement m;
  const bool device_timer = device.has_device_timer();
  m.samples_ms.resize(static_cast<std::size_t>(protocol.trials));  // no allocation inside the loop
  if (device_timer) m.device_samples_ms.resize(static_cast<std::size_t>(protocol.trials));

  // One timed run: the synchronisation on both sides makes host time cover the work itself,
  // not its submission.
  auto timed = [&](double& host_ms, double* device_ms) {
    device.synchronize();
    const std::int64_t t0 = clock.now_ns();
    if (device_timer) device.mark_start();
    run();
    if (device_timer) device.mark_stop();
    device.synchronize();
    const std::int64_t t1 = clock.now_ns();
    host_ms = static_cast<double>(t1 - t0) * 1e-6;
    if (device_ms != nullptr) *device_ms = device.elapsed_ms();
  };

  m.rss_before_bytes = current_rss_bytes();
  m.device_memory_before = device.memory();
  m.peak_rss_is_process_lifetime = !reset_peak_rss();
  timed(m.cold_ms, device_timer ? &m.cold_device_ms : nullptr);
  // A SIGINT is honoured between runs (a flag read, outside the timed region).
  for (int i = 0; i < protocol.warmup; ++i) {
    throw_if_interrupted();
    run();
  }
  device.synchronize();
  for (std::size_t i = 0; i < m.samples_ms.size(); ++i) {
    throw_if_interrupted();
    timed(m.samples_ms[i], device_timer ? &m.device_samples_ms[i] : nullptr);
  }
  m.rss_after_bytes = current_rss_bytes();
  m.peak_rss_bytes = peak_rss_bytes();
  m.device_memory = device.memory();
  return m;
}

}  // namespace convlab
