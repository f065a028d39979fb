#include "bench/harness/memory.hpp"

#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <fstream>
#include <string>

namespace convlab {

namespace {
// Reads a "Key:   1234 kB" line of /proc/self/status; 0 when absent.
std::uint64_t proc_status_kib(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(status, line))
    if (line.rfind(prefix, 0) == 0) return std::stoull(line.substr(prefix.size()));
  return 0;
}

std::uint64_t rusage_peak_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
#ifdef __APPLE__
  return static_cast<std::uint64_t>(usage.ru_maxrss);  // bytes on macOS
#else
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // KiB elsewhere
#endif
}
}  // namespace

std::uint64_t current_rss_bytes() { return proc_status_kib("VmRSS") * 1024; }

std::uint64_t peak_rss_bytes() {
  const std::uint64_t hwm = proc_status_kib("VmHWM") * 1024;
  return hwm != 0 ? hwm : rusage_peak_bytes();
}

namespace {
// Returns freed heap memory to the system: glibc's malloc_trim gives back the top of every arena
// and the free pages inside it. The allocator's thresholds are left as any program has them: fixing
// the mmap threshold (as this did until 2026-12-07) made every forward that allocates a block above
// it map, fault in and unmap that block, and trim the heap top on each free; Eigen's threaded GEMM
// (cpu.01 at batch 1, a 147 KB packed block per product) ran 10x slower in the harness than in a
// plain program. False where the allocator offers no trim.
bool release_free_memory() {
#if defined(__GLIBC__)
  return malloc_trim(0) >= 0;
#else
  return false;
#endif
}
}  // namespace

void RowMemoryProbe::start() {
  const bool released = release_free_memory();
  own_ = released && reset_peak_rss();
  baseline_ = current_rss_bytes();
}

RowMemory RowMemoryProbe::finish(std::uint64_t rss_before_runs) const {
  const std::uint64_t peak = std::max(peak_rss_bytes(), rss_before_runs);
  return {.baseline_bytes = baseline_, .peak_bytes = peak > baseline_ ? peak - baseline_ : 0, .own = own_};
}

bool reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  if (!clear_refs) return false;
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

}  // namespace convlab
