// Resident memory of this process, from /proc/self/status (Linux) or getrusage elsewhere.
#pragma once

#include <cstdint>

namespace convlab {

std::uint64_t current_rss_bytes();  // 0 when the system does not say
std::uint64_t peak_rss_bytes();     // high-water mark since process start or the last reset
// Resets the high-water mark to the current RSS (Linux: "5" into /proc/self/clear_refs).
// Returns false where the system does not allow it; the peak is then the process's lifetime peak.
bool reset_peak_rss();

// One result row's own memory. The allocator keeps freed pages, so a process's resident memory
// remembers every earlier row: before a row is planned, freed memory is returned to the system
// and the high-water mark reset, and the row's figure is the peak above that baseline, so the
// same row reports the same memory after a small row or a large one (a process's first row also
// holds the process's one-time setup).
struct RowMemory {
  std::uint64_t baseline_bytes = 0;  // resident before the row's plan was built
  std::uint64_t peak_bytes = 0;      // the row's peak above the baseline: its plan and its runs
  bool own = false;  // false: the figure includes memory not the row's (nothing measured, no reset, shared)
};
// start() before the row's plan is built; finish(rss_before_runs) after its runs, given the
// resident memory the harness read before the cold run (measure() resets the high-water mark
// there, so the plan's own resident memory is taken from that reading).
class RowMemoryProbe {
 public:
  void start();
  RowMemory finish(std::uint64_t rss_before_runs) const;

 private:
  std::uint64_t baseline_ = 0;
  bool own_ = false;
};

}  // namespace convlab
