#include "bench/harness/interrupt.hpp"

#include <csignal>

namespace convlab {

namespace {
// Written by the signal handler: only a lock-free atomic or volatile sig_atomic_t is safe there.
volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_sigint(int) { g_interrupted = 1; }
}  // namespace

void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_sigint;
  action.sa_flags = SA_RESETHAND;  // the second Ctrl-C takes the default action: the user insists
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

void throw_if_interrupted() {
  if (interrupted()) throw Interrupted();
}

void set_interrupted(bool value) { g_interrupted = value ? 1 : 0; }

}  // namespace convlab
