// Resident memory of this process, from /proc/self/status (Linux) or getrusage elsewhere.
#pragma once

#include <cstdint>

namespace convlab {

std::uint64_t current_rss_bytes();  // 0 when the system does not say
std::uint64_t peak_rss_bytes();     // high-water mark since process start or the last reset
// Resets the high-water mark to the current RSS (Linux: "5" into /proc/self/clear_refs).
// Returns false where the system does not allow it; the peak is then the process's lifetime peak.
bool reset_peak_rss();

}  // namespace convlab
