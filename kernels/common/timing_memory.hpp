// Memory for plan-time timing (cpu.auto, cpu.auto_int8, cpu.02's tiles: kernels/cpu/plan_timing.hpp),
// kept from one plan to the next while a network is planned.
// Plan times each candidate on buffers of its own as large as the layer's input, output and
// workspace. New memory costs a page fault per 4 KiB page, about 11 us each on the Zen 5 VM (0.5 s
// for 184 MB): planning mobilenet-v2 at batch 32 with cpu.auto faulted 0.8 million more pages than
// on one shared set (`run --auto-cache off` 37 -> 45 s). While a ReuseTimingMemory lives on a
// thread, the blocks released there go to its free list and timing_floats takes the smallest free
// block large enough, zeroed again; it frees them all when it ends, before anything is timed.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace convlab {

class ReuseTimingMemory;

// Gives a block back to the ReuseTimingMemory it came from while that is active, else frees it.
struct TimingFree {
  ReuseTimingMemory* pool = nullptr;
  std::size_t capacity = 0;  // floats
  void operator()(float* p) const;
};
using TimingFloats = std::unique_ptr<float[], TimingFree>;

// `count` zeroed floats, 64-byte aligned: a free block of the active ReuseTimingMemory, or new.
TimingFloats timing_floats(std::size_t count);

class ReuseTimingMemory {
 public:
  // Becomes this thread's, unless one already is (a nested one then changes nothing).
  ReuseTimingMemory();
  ~ReuseTimingMemory();
  ReuseTimingMemory(const ReuseTimingMemory&) = delete;
  ReuseTimingMemory& operator=(const ReuseTimingMemory&) = delete;

  std::size_t free_blocks() const { return free_.size(); }

 private:
  friend struct TimingFree;
  friend TimingFloats timing_floats(std::size_t count);
  struct Block {
    float* data;
    std::size_t capacity;
  };
  bool active_;
  std::vector<Block> free_;
};

}  // namespace convlab
