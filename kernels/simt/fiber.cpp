// Stacks and context switches for the emulator's fibers (see fiber.hpp).
#include "kernels/simt/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "kernels/simt/emulator.hpp"

#if defined(CONVLAB_SIMT_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace convlab::simt::detail {

Stack::Stack(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  size_ = (bytes + page - 1) / page * page;
  mapping_bytes_ = size_ + page;
  mapping_ = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping_ == MAP_FAILED)
    throw EmulatorError("simt: cannot map a " + std::to_string(mapping_bytes_) + "-byte fiber stack: " +
                        std::strerror(errno));
  mprotect(mapping_, page, PROT_NONE);  // the guard: an overflow faults instead of corrupting
  base_ = static_cast<char*>(mapping_) + page;
}

Stack::~Stack() { munmap(mapping_, mapping_bytes_); }

namespace {
// A finished fiber's last frame never returns, so under ASan its redzone marks stay at the top of
// the stack and would flag the next fiber that uses it. The frames below it returned or were
// unwound, which clears theirs: clearing the top few KiB is enough.
void forget_last_frames([[maybe_unused]] const Stack& stack) {
#if defined(CONVLAB_SIMT_ASAN)
  const std::size_t bytes = std::min<std::size_t>(stack.size(), 16 * 1024);
  __asan_unpoison_memory_region(static_cast<char*>(stack.base()) + stack.size() - bytes, bytes);
#endif
}
}  // namespace

#if defined(CONVLAB_SIMT_UCONTEXT)

namespace {
// makecontext passes int arguments only: the Context pointer travels as two halves.
void ucontext_entry(unsigned hi, unsigned lo) {
  auto* ctx = reinterpret_cast<Context*>((static_cast<std::uintptr_t>(hi) << 32) | lo);
  ctx->entry(ctx->arg);
}
}  // namespace

void prepare_context(Context& ctx, const Stack& stack, void (*entry)(void*), void* arg) {
  forget_last_frames(stack);
  getcontext(&ctx.uc);
  ctx.uc.uc_stack.ss_sp = stack.base();
  ctx.uc.uc_stack.ss_size = stack.size();
  ctx.uc.uc_link = nullptr;
  ctx.entry = entry;
  ctx.arg = arg;
  const auto p = reinterpret_cast<std::uintptr_t>(&ctx);
  makecontext(&ctx.uc, reinterpret_cast<void (*)()>(ucontext_entry), 2, static_cast<unsigned>(p >> 32),
              static_cast<unsigned>(p & 0xffffffffu));
}

void switch_context(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }

#else

// convlab_simt_swap(save, load): pushes the callee-saved registers and the MXCSR / x87 control
// words, stores rsp in *save, loads rsp from load and pops the same frame there. A new fiber's
// frame "returns" into convlab_simt_start, which calls r13(r12); its CFI marks the outermost frame
// so that unwinders and debuggers stop there.
extern "C" void convlab_simt_swap(void** save, void* load);
extern "C" void convlab_simt_start();
asm(R"(
  .text
  .p2align 4
  .globl convlab_simt_swap
  .hidden convlab_simt_swap
  .type convlab_simt_swap, @function
convlab_simt_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size convlab_simt_swap, .-convlab_simt_swap

  .p2align 4
  .globl convlab_simt_start
  .hidden convlab_simt_start
  .type convlab_simt_start, @function
convlab_simt_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size convlab_simt_start, .-convlab_simt_start
)");

void prepare_context(Context& ctx, const Stack& stack, void (*entry)(void*), void* arg) {
  forget_last_frames(stack);
  // The frame convlab_simt_swap pops, lowest address first; rsp is 16-byte aligned after the
  // final ret, as the call in convlab_simt_start needs.
  auto top = reinterpret_cast<std::uintptr_t>(stack.base()) + stack.size();
  top &= ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 16 - 8 * 8);
  std::uint32_t mxcsr = 0;
  std::uint16_t fpcw = 0;
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(fpcw));  // the fiber inherits the FP mode
  frame[0] = mxcsr | (static_cast<std::uint64_t>(fpcw) << 32);
  frame[1] = 0;                                          // r15
  frame[2] = 0;                                          // r14
  frame[3] = reinterpret_cast<std::uint64_t>(entry);     // r13
  frame[4] = reinterpret_cast<std::uint64_t>(arg);       // r12
  frame[5] = 0;                                          // rbx
  frame[6] = 0;                                          // rbp
  frame[7] = reinterpret_cast<std::uint64_t>(&convlab_simt_start);  // return address
  ctx.sp = frame;
}

void switch_context(Context& from, Context& to) { convlab_simt_swap(&from.sp, to.sp); }

#endif

#if defined(CONVLAB_SIMT_ASAN)
void asan_start_switch(void** fake_stack_save, const void* bottom, std::size_t size) {
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
}
void asan_finish_switch(void* fake_stack_save, const void** old_bottom, std::size_t* old_size) {
  __sanitizer_finish_switch_fiber(fake_stack_save, old_bottom, old_size);
}
#else
void asan_start_switch(void**, const void*, std::size_t) {}
void asan_finish_switch(void*, const void**, std::size_t*) {}
#endif

}  // namespace convlab::simt::detail
