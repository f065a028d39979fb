// Runs CUDA kernels compiled as plain C++ (see simt.hpp) on the CPU. A launch runs the blocks of
// the grid one after another on the calling OS thread; inside a block every GPU thread is a fiber
// that runs until it waits at a barrier or a warp op, or returns.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/simt/launch_config.hpp"

namespace convlab::simt {

// A bad launch, a kernel bug the emulator can see (divergent barriers, deadlocks), or a kernel
// that cannot run here. what() is one line.
class EmulatorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Totals since the program started, for tests and throughput messages.
struct Stats {
  std::uint64_t launches = 0;
  std::uint64_t blocks = 0;
  std::uint64_t threads = 0;            // GPU threads run to completion
  std::uint64_t context_switches = 0;   // each switch between the scheduler and a fiber
  std::uint64_t stacks_allocated = 0;   // fiber stacks mapped; they are reused across launches
};
Stats stats();

namespace detail {
struct KernelCall {
  void (*call)(const void* ctx);
  const void* ctx;
};
void run_grid(const LaunchConfig& cfg, KernelCall kernel);
}  // namespace detail

// Runs kernel<<<cfg.grid, cfg.block, cfg.shared_bytes>>>(args...) to completion. The arguments are
// converted to the kernel's parameter types once and copied into every thread, as CUDA does.
// Launches are serialised process-wide (shared memory is static storage); a launch from inside a
// kernel is an error. Throws EmulatorError, or whatever a kernel thread threw.
template <class... P, class... A>
void launch(const LaunchConfig& cfg, void (*kernel)(P...), A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "simt::launch: the kernel takes a different number of arguments");
  auto params = std::tuple<std::decay_t<P>...>(std::forward<A>(args)...);
  auto body = [&] { std::apply(kernel, params); };
  detail::run_grid(cfg, {[](const void* ctx) { (*static_cast<const decltype(body)*>(ctx))(); }, &body});
}

}  // namespace convlab::simt
