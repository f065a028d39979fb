// Fibers for the emulator: stacks from mmap (untouched pages cost nothing, a guard page below
// catches overflow) and a context switch. On x86-64 System V the switch is hand-written (it saves
// only the callee-saved registers, the FP control words and rsp); elsewhere, or with
// CONVLAB_SIMT_UCONTEXT defined, it is ucontext, which is slower (it saves the signal mask with a
// system call per switch).
#pragma once

#include <cstddef>

#if !defined(CONVLAB_SIMT_UCONTEXT) && !(defined(__x86_64__) && defined(__ELF__))
#define CONVLAB_SIMT_UCONTEXT 1
#endif
#if defined(CONVLAB_SIMT_UCONTEXT)
#include <ucontext.h>
#endif

namespace convlab::simt::detail {

class Stack {
 public:
  explicit Stack(std::size_t bytes);
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  void* base() const { return base_; }  // lowest usable byte, above the guard page
  std::size_t size() const { return size_; }

 private:
  void* mapping_;
  std::size_t mapping_bytes_;
  void* base_;
  std::size_t size_;
};

struct Context {
#if defined(CONVLAB_SIMT_UCONTEXT)
  ucontext_t uc;
  void (*entry)(void*) = nullptr;
  void* arg = nullptr;
#else
  void* sp = nullptr;
#endif
};

// Makes `ctx` start entry(arg) on `stack` when first switched to. entry must never return: a
// finished fiber switches away for the last time.
void prepare_context(Context& ctx, const Stack& stack, void (*entry)(void*), void* arg);
// Saves the running execution into `from` and resumes `to`.
void switch_context(Context& from, Context& to);

// AddressSanitizer must be told about every switch, or it takes the fiber stacks for stack
// overflows and cannot unwind them when an exception is thrown. No-ops without ASan.
#if defined(__SANITIZE_ADDRESS__)
#define CONVLAB_SIMT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONVLAB_SIMT_ASAN 1
#endif
#endif

void asan_start_switch(void** fake_stack_save, const void* bottom, std::size_t size);
void asan_finish_switch(void* fake_stack_save, const void** old_bottom, std::size_t* old_size);

}  // namespace convlab::simt::detail
