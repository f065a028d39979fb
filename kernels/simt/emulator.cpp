// The emulator's scheduler. A launch runs the grid's blocks in order (x fastest). A block's GPU
// threads are fibers on the calling OS thread, started in linear-id order; each runs until it
// waits at a barrier or a warp op, or returns. A barrier opens when every live thread of the block
// waits at one, a warp op when every live lane its masks name waits at one; threads that returned
// no longer count, as on the GPU. When nothing can run and threads still wait, that is a deadlock.
#include "kernels/simt/emulator.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "kernels/simt/fiber.hpp"
#include "kernels/simt/simt.hpp"

// The bounds of the output section kernels/simt/shared.ld gathers the __shared__ statics into;
// weak, so that a program without emulated kernels links with both null.
extern "C" {
extern char convlab_simt_shared_begin[] __attribute__((weak));
extern char convlab_simt_shared_end[] __attribute__((weak));
}

namespace convlab::simt {
namespace detail {
namespace {

constexpr std::size_t kStackBytes = 256 * 1024;
constexpr unsigned kMaxBlockThreads = 1024;
constexpr unsigned kWarp = 32;
constexpr unsigned kMaxDynamicShared = 227 * 1024;  // the largest opt-in limit of current GPUs
constexpr std::uint64_t kPoison = ~std::uint64_t{0};  // NaN as float or double, -1 as an integer

enum class State : unsigned char { ready, barrier, warp, done };

struct Cancelled {};  // unwinds a waiting fiber's stack after another thread of its block failed

struct Fiber {
  BuiltinVars vars{};
  unsigned linear = 0;
  Context ctx{};
  const Stack* stack = nullptr;
  void* fake_stack = nullptr;  // ASan's bookkeeping for this stack
  State state = State::ready;
  bool started = false;
  bool cancel = false;
  const char* op = "";  // the built-in it waits in, for messages
  Site site{"", 0};
  // What it posted at the barrier or warp op, and what it gets back.
  WarpOp warp_op = WarpOp::sync;
  unsigned mask = 0;
  std::uint64_t value = 0;
  int lane_arg = 0;
  int width = kWarp;
  std::uint64_t result = 0;
  int arrived = 0;
  std::exception_ptr error;
};

struct DynamicDeleter {
  void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{128}); }
};

struct Emulator {
  std::mutex mutex;  // one launch at a time: shared memory is static storage
  Stats stats;
  std::vector<std::unique_ptr<Stack>> stacks;  // grow to the largest block, reused ever after
  std::vector<Fiber> fibers;
  Context scheduler{};
  void* scheduler_fake = nullptr;
  const void* scheduler_stack = nullptr;
  std::size_t scheduler_stack_size = 0;
  KernelCall kernel{};
  std::unique_ptr<std::byte[], DynamicDeleter> dynamic;  // this launch's dynamic shared memory
  std::size_t dynamic_bytes = 0;
  // The running block.
  unsigned threads = 0;
  unsigned live = 0;
  unsigned at_barrier = 0;
  uint3 block{};
  std::deque<Fiber*> queue;
};

Emulator& emulator() {
  static Emulator e;
  return e;
}

thread_local Fiber* t_fiber = nullptr;  // the fiber running on this OS thread, if any
thread_local bool t_in_launch = false;

std::string coords(uint3 v) {
  std::string s = std::to_string(v.x);  // appended, not `"(" + ...`: GCC 12 warns falsely there (-Wrestrict)
  s += ',';
  s += std::to_string(v.y);
  s += ',';
  s += std::to_string(v.z);
  return '(' + s + ')';
}
std::string coords(dim3 v) { return coords(uint3{v.x, v.y, v.z}); }

std::string where(const Site& site) {
  const std::string file = site.file;
  return file.substr(file.find_last_of('/') + 1) + ":" + std::to_string(site.line);
}

const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::sync: return "__syncwarp";
    case WarpOp::shfl_idx: return "__shfl_sync";
    case WarpOp::shfl_up: return "__shfl_up_sync";
    case WarpOp::shfl_down: return "__shfl_down_sync";
    case WarpOp::shfl_xor: return "__shfl_xor_sync";
    case WarpOp::ballot: return "__ballot_sync";
    case WarpOp::any: return "__any_sync";
    case WarpOp::all: return "__all_sync";
    case WarpOp::mma_s8: return "mma_m16n8k32_s8";
  }
  return "warp op";
}

Fiber& running(const char* what) {
  if (t_fiber == nullptr)
    throw EmulatorError(std::string("simt: ") + what + " called outside a kernel run by simt::launch");
  return *t_fiber;
}

#if defined(CONVLAB_SIMT_ASAN)
// ASan instruments the gathered statics with redzones and its memset checks them: plain stores.
__attribute__((no_sanitize("address"))) void poison(char* begin, char* end) {
  for (volatile char* p = begin; p < end; ++p) *p = static_cast<char>(0xFF);
}
#else
void poison(char* begin, char* end) { std::memset(begin, 0xFF, static_cast<std::size_t>(end - begin)); }
#endif

void poison_shared(Emulator& e) {
  char* begin = convlab_simt_shared_begin;
  char* end = convlab_simt_shared_end;
  if (begin != nullptr && end > begin) poison(begin, end);
  if (e.dynamic) std::memset(e.dynamic.get(), 0xFF, e.dynamic_bytes);
}

[[noreturn]] void fiber_main(void* arg) {
  auto& f = *static_cast<Fiber*>(arg);
  auto& e = emulator();
  asan_finish_switch(nullptr, &e.scheduler_stack, &e.scheduler_stack_size);
  try {
    e.kernel.call(e.kernel.ctx);
  } catch (const Cancelled&) {
  } catch (...) {
    f.error = std::current_exception();  // kept for the scheduler: no exception crosses a switch
  }
  f.state = State::done;
  ++e.stats.context_switches;
  asan_start_switch(nullptr, e.scheduler_stack, e.scheduler_stack_size);  // these frames are dead
  switch_context(f.ctx, e.scheduler);
  __builtin_unreachable();
}

void resume(Emulator& e, Fiber& f) {
  f.started = true;
  f.state = State::ready;
  t_fiber = &f;
  current_vars = &f.vars;
  ++e.stats.context_switches;
  asan_start_switch(&e.scheduler_fake, f.stack->base(), f.stack->size());
  switch_context(e.scheduler, f.ctx);
  asan_finish_switch(e.scheduler_fake, nullptr, nullptr);
  t_fiber = nullptr;
  current_vars = nullptr;
}

// Called on the fiber: hands control to the scheduler until the barrier or warp op opens.
void wait(Fiber& f) {
  auto& e = emulator();
  ++e.stats.context_switches;
  asan_start_switch(&f.fake_stack, e.scheduler_stack, e.scheduler_stack_size);
  switch_context(f.ctx, e.scheduler);
  asan_finish_switch(f.fake_stack, nullptr, nullptr);
  if (f.cancel) throw Cancelled{};
}

void release_barrier_if_complete(Emulator& e) {
  if (e.at_barrier == 0 || e.at_barrier != e.live) return;
  const Fiber* first = nullptr;
  int count = 0;
  for (unsigned i = 0; i < e.threads; ++i) {
    const Fiber& f = e.fibers[i];
    if (f.state != State::barrier) continue;
    if (first == nullptr) {
      first = &f;
    } else if (f.site.line != first->site.line || std::strcmp(f.site.file, first->site.file) != 0) {
      throw EmulatorError("simt: barrier divergence: thread " + coords(first->vars.thread_idx) + " of block " +
                          coords(e.block) + " at " + where(first->site) + ", thread " +
                          coords(f.vars.thread_idx) + " at " + where(f.site));
    }
    count += f.value != 0;
  }
  for (unsigned i = 0; i < e.threads; ++i) {
    Fiber& f = e.fibers[i];
    if (f.state != State::barrier) continue;
    f.result = static_cast<std::uint64_t>(count);
    f.arrived = static_cast<int>(e.live);
    f.state = State::ready;
    e.queue.push_back(&f);
  }
  e.at_barrier = 0;
}

// The value lane `lane` receives; `waiting` and `votes` are bit sets over the warp's lanes.
std::uint64_t warp_result(const Fiber& f, unsigned lane, unsigned waiting, unsigned votes, const Fiber* warp) {
  switch (f.warp_op) {
    case WarpOp::sync: return 0;
    case WarpOp::ballot: return votes & f.mask;
    case WarpOp::any: return (votes & f.mask) != 0;
    case WarpOp::all: return (votes & f.mask) == (waiting & f.mask);
    default: break;
  }
  const auto w = static_cast<unsigned>(f.width);
  const unsigned segment = lane & ~(w - 1);
  const unsigned in_segment = lane & (w - 1);
  const auto arg = static_cast<unsigned>(f.lane_arg);
  unsigned src = lane;  // out of range: the lane keeps its own value, as on the GPU
  switch (f.warp_op) {
    case WarpOp::shfl_idx: src = segment + (arg & (w - 1)); break;
    case WarpOp::shfl_up: src = in_segment >= arg ? lane - arg : lane; break;
    case WarpOp::shfl_down: src = std::uint64_t{in_segment} + arg < w ? lane + arg : lane; break;
    case WarpOp::shfl_xor: src = (lane ^ arg) < segment + w ? lane ^ arg : lane; break;
    default: break;
  }
  // A lane that returned or did not take part has no value to give: poison shows the bug.
  return (waiting >> src & 1u) != 0 ? warp[src].value : kPoison;
}

// An mma.sync is one instruction of the whole warp (.aligned): every one of the 32 lanes must
// execute the same one, or the GPU's result is undefined; here that is an error naming the lane.
void multiply_warp(const Emulator& e, Fiber* warp, unsigned lanes, unsigned waiting) {
  const Fiber* first = nullptr;
  for (unsigned l = 0; l < lanes; ++l)
    if (warp[l].state == State::warp && warp[l].warp_op == WarpOp::mma_s8) first = first ? first : &warp[l];
  for (unsigned l = 0; l < kWarp; ++l) {
    const Fiber* f = l < lanes ? &warp[l] : nullptr;
    const bool same = f != nullptr && (waiting >> l & 1u) != 0 && f->warp_op == WarpOp::mma_s8 &&
                      f->site.line == first->site.line && std::strcmp(f->site.file, first->site.file) == 0;
    if (same) continue;
    const std::string lane = "lane " + std::to_string(l) + " of the warp of thread " + coords(first->vars.thread_idx) +
                             " in block " + coords(e.block);
    throw EmulatorError("simt: mma_m16n8k32_s8 at " + where(first->site) + " needs all 32 lanes of the warp: " + lane +
                        (f == nullptr                              ? " does not exist (the block has " + std::to_string(e.threads) + " threads)"
                         : f->state == State::done                 ? " has returned"
                         : f->state == State::warp                 ? std::string(" waits in ") + f->op + " at " + where(f->site)
                                                                   : " is elsewhere"));
  }
  MmaS8Lane* registers[kWarp];
  for (unsigned l = 0; l < kWarp; ++l) registers[l] = reinterpret_cast<MmaS8Lane*>(static_cast<std::uintptr_t>(warp[l].value));
  mma_m16n8k32_s8_warp(registers);
  for (unsigned l = 0; l < kWarp; ++l) warp[l].result = 0;
}

void release_warp_if_complete(Emulator& e, unsigned warp_index) {
  const unsigned begin = warp_index * kWarp;
  const unsigned lanes = std::min(kWarp, e.threads - begin);
  Fiber* warp = &e.fibers[begin];
  unsigned live = 0, waiting = 0, wanted = 0, votes = 0;
  for (unsigned l = 0; l < lanes; ++l) {
    if (warp[l].state != State::done) live |= 1u << l;
    if (warp[l].state != State::warp) continue;
    waiting |= 1u << l;
    wanted |= warp[l].mask;
    if (warp[l].value != 0) votes |= 1u << l;
  }
  if (waiting == 0 || (wanted & live & ~waiting) != 0) return;
  if (std::any_of(warp, warp + lanes, [](const Fiber& f) { return f.state == State::warp && f.warp_op == WarpOp::mma_s8; })) {
    multiply_warp(e, warp, lanes, waiting);
  } else {
    for (unsigned l = 0; l < lanes; ++l)
      if ((waiting >> l & 1u) != 0) warp[l].result = warp_result(warp[l], l, waiting, votes, warp);
  }
  for (unsigned l = 0; l < lanes; ++l) {
    if ((waiting >> l & 1u) == 0) continue;
    warp[l].state = State::ready;
    e.queue.push_back(&warp[l]);
  }
}

[[noreturn]] void throw_deadlock(const Emulator& e) {
  for (unsigned i = 0; i < e.threads; ++i) {
    const Fiber& f = e.fibers[i];
    if (f.state != State::warp) continue;
    const unsigned begin = i / kWarp * kWarp;
    for (unsigned l = 0; l < kWarp && begin + l < e.threads; ++l) {
      const Fiber& g = e.fibers[begin + l];
      if ((f.mask >> l & 1u) == 0 || g.state != State::barrier) continue;
      throw EmulatorError("simt: deadlock in block " + coords(e.block) + ": thread " + coords(f.vars.thread_idx) +
                          " waits in " + f.op + " at " + where(f.site) + " for thread " +
                          coords(g.vars.thread_idx) + ", which waits in " + g.op + " at " + where(g.site));
    }
  }
  throw EmulatorError("simt: deadlock in block " + coords(e.block) + ": " + std::to_string(e.live) +
                      " threads wait and none can go on");
}

void schedule(Emulator& e) {
  while (!e.queue.empty()) {
    Fiber& f = *e.queue.front();
    e.queue.pop_front();
    resume(e, f);
    switch (f.state) {
      case State::done:
        --e.live;
        ++e.stats.threads;
        if (f.error) std::rethrow_exception(f.error);
        release_barrier_if_complete(e);
        release_warp_if_complete(e, f.linear / kWarp);
        break;
      case State::barrier:
        ++e.at_barrier;
        release_barrier_if_complete(e);
        break;
      case State::warp:
        release_warp_if_complete(e, f.linear / kWarp);
        break;
      case State::ready:
        break;
    }
  }
  if (e.live != 0) throw_deadlock(e);
}

// After a failure, every started fiber still waiting is resumed to unwind its stack (destructors
// run); fibers that never started are simply dropped.
void cancel_block(Emulator& e) {
  e.queue.clear();
  for (unsigned i = 0; i < e.threads; ++i) {
    Fiber& f = e.fibers[i];
    f.cancel = true;
    for (int tries = 0; f.started && f.state != State::done && tries < 16; ++tries) resume(e, f);
    f.state = State::done;
  }
}

void run_block(Emulator& e, const LaunchConfig& cfg) {
  const dim3 b = cfg.block;
  for (unsigned i = 0; i < e.threads; ++i) {
    Fiber& f = e.fibers[i];
    f.vars = {{i % b.x, i / b.x % b.y, i / (b.x * b.y)}, e.block, b, cfg.grid};
    f.linear = i;
    f.state = State::ready;
    f.started = f.cancel = false;
    f.error = nullptr;
    f.fake_stack = nullptr;
    prepare_context(f.ctx, *f.stack, fiber_main, &f);
    e.queue.push_back(&f);
  }
  e.live = e.threads;
  e.at_barrier = 0;
  poison_shared(e);
  ++e.stats.blocks;
  try {
    schedule(e);
  } catch (...) {
    cancel_block(e);
    throw;
  }
}

void validate(const LaunchConfig& cfg) {
  const dim3 g = cfg.grid, b = cfg.block;
  if (g.x == 0 || g.y == 0 || g.z == 0) throw EmulatorError("simt: grid " + coords(g) + " has a zero dimension");
  if (b.x == 0 || b.y == 0 || b.z == 0) throw EmulatorError("simt: block " + coords(b) + " has a zero dimension");
  if (g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535)
    throw EmulatorError("simt: grid " + coords(g) + " exceeds CUDA's limits (x < 2^31, y and z <= 65535)");
  if (b.x > kMaxBlockThreads || b.y > kMaxBlockThreads || b.z > 64)
    throw EmulatorError("simt: block " + coords(b) + " exceeds CUDA's limits (x, y <= 1024, z <= 64)");
  const std::uint64_t threads = std::uint64_t{b.x} * b.y * b.z;
  if (threads > kMaxBlockThreads)
    throw EmulatorError("simt: block " + coords(b) + " has " + std::to_string(threads) +
                        " threads; CUDA allows at most 1024");
  if (cfg.shared_bytes > kMaxDynamicShared)
    throw EmulatorError("simt: shared_bytes " + std::to_string(cfg.shared_bytes) + " exceeds the " +
                        std::to_string(kMaxDynamicShared) + " bytes any current GPU gives a block");
}

void ensure_fibers(Emulator& e, unsigned threads) {
  while (e.stacks.size() < threads) {
    e.stacks.push_back(std::make_unique<Stack>(kStackBytes));
    ++e.stats.stacks_allocated;
  }
  if (e.fibers.size() < threads) e.fibers.resize(threads);
  for (unsigned i = 0; i < threads; ++i) e.fibers[i].stack = e.stacks[i].get();
}

}  // namespace

Coordinates coordinates() {
  const BuiltinVars& v = running("a thread position").vars;
  return {{v.thread_idx.x, v.thread_idx.y, v.thread_idx.z},
          {v.block_idx.x, v.block_idx.y, v.block_idx.z},
          {v.block_dim.x, v.block_dim.y, v.block_dim.z},
          {v.grid_dim.x, v.grid_dim.y, v.grid_dim.z}};
}

void* dynamic_shared() {
  running("CONVLAB_DYNAMIC_SHARED");
  return emulator().dynamic.get();  // null when the launch asked for no dynamic shared memory
}

BarrierResult block_barrier(int predicate, const Site& site) {
  Fiber& f = running("__syncthreads");
  f.state = State::barrier;
  f.op = "__syncthreads";
  f.site = site;
  f.value = predicate != 0;
  wait(f);
  return {static_cast<int>(f.result), f.arrived};
}

std::uint64_t warp_op(WarpOp op, unsigned mask, std::uint64_t value, int lane_arg, int width,
                      const Site& site) {
  Fiber& f = running(op_name(op));
  if (width < 1 || width > static_cast<int>(kWarp) || (width & (width - 1)) != 0)
    throw EmulatorError(std::string("simt: ") + op_name(op) + " at " + where(site) + " has width " +
                        std::to_string(width) + "; it must be a power of two from 1 to 32");
  f.state = State::warp;
  f.op = op_name(op);
  f.site = site;
  f.warp_op = op;
  f.mask = mask;
  f.value = value;
  f.lane_arg = lane_arg;
  f.width = width;
  wait(f);
  return f.result;
}

unsigned active_mask() {
  const Fiber& f = running("__activemask");
  const auto& e = emulator();
  const unsigned begin = f.linear / kWarp * kWarp;
  unsigned mask = 0;
  for (unsigned l = 0; l < kWarp && begin + l < e.threads; ++l)
    if (e.fibers[begin + l].state != State::done) mask |= 1u << l;
  return mask;
}

void run_grid(const LaunchConfig& cfg, KernelCall kernel) {
  if (t_in_launch) throw EmulatorError("simt: launch from inside a kernel (dynamic parallelism) is not emulated");
  validate(cfg);
  auto& e = emulator();
  std::lock_guard lock(e.mutex);
  t_in_launch = true;
  struct Leave {
    ~Leave() { t_in_launch = false; }
  } leave;
  e.threads = cfg.block.x * cfg.block.y * cfg.block.z;
  ensure_fibers(e, e.threads);
  e.kernel = kernel;
  e.dynamic_bytes = cfg.shared_bytes;
  e.dynamic.reset(cfg.shared_bytes == 0
                      ? nullptr
                      : static_cast<std::byte*>(::operator new[](cfg.shared_bytes, std::align_val_t{128})));
  ++e.stats.launches;
  for (unsigned z = 0; z < cfg.grid.z; ++z)
    for (unsigned y = 0; y < cfg.grid.y; ++y)
      for (unsigned x = 0; x < cfg.grid.x; ++x) {
        e.block = {x, y, z};
        run_block(e, cfg);
      }
}

}  // namespace detail

Stats stats() {
  auto& e = detail::emulator();
  if (detail::t_in_launch) return e.stats;  // the launching thread already holds the lock
  std::lock_guard lock(e.mutex);
  return e.stats;
}

}  // namespace convlab::simt
