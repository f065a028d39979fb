// The `convlab` command line. Exit codes: 0 success; 1 a validation failed; 2 bad input (one line
// on stderr naming the bad value and the choices); 3 partial success (some batch ran out of
// memory; the others were measured and written); 130 interrupted by SIGINT (bench/interrupt.hpp:
// what was finished is written, marked incomplete).
#pragma once

namespace convlab {

inline constexpr int kExitOk = 0;
inline constexpr int kExitValidationFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitPartial = 3;

int run_cli(int argc, char** argv);

}  // namespace convlab
