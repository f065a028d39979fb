// Ctrl-C during a long run: the first SIGINT asks the harness to stop at the next trial boundary,
// so the command can still write what it measured (marked incomplete) and exit 130, the shell's
// code for "ended by SIGINT". A second SIGINT kills the process as usual.
#pragma once

#include <exception>

namespace convlab {

inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT

// Thrown by the harness (measure) when a SIGINT has arrived; the result in progress is dropped.
struct Interrupted : std::exception {
  const char* what() const noexcept override { return "interrupted by SIGINT"; }
};

// Installs the handler (one shot: it resets to the default action, so a second Ctrl-C kills).
void catch_interrupts();
bool interrupted();
void throw_if_interrupted();
// For tests: act as if a SIGINT had arrived, or forget one.
void set_interrupted(bool value);

}  // namespace convlab
