// The `convlab` command line. Exit codes: 0 success; 1 a validation failed; 2 bad input (one line
// on stderr naming the bad value and the choices); 3 partial success (some batch ran out of
// memory; the others were measured and written); 4 nothing measured: the backend asked for is
// not available here (no CUDA device, Metal off macOS) or none of its kernels runs the model;
// 130 interrupted by SIGINT (bench/harness/interrupt.hpp: what was finished is written, marked
// incomplete).
#pragma once

#include <stdexcept>

#include "kernels/common/kernel.hpp"

namespace convlab {

inline constexpr int kExitOk = 0;
inline constexpr int kExitValidationFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitPartial = 3;
inline constexpr int kExitBackendUnavailable = 4;

// Thrown when a command's backend cannot run here; run_cli prints "convlab: skipping backend
// ...: <why>" and exits kExitBackendUnavailable.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Throws BackendUnavailable, with backend_status's reason, unless `backend` can run here.
void require_backend(Backend backend);

int run_cli(int argc, char** argv);

}  // namespace convlab
