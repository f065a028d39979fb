#include "kernels/common/timing_memory.hpp"

#include <algorithm>
#include <cstring>

#include "kernels/common/tensor.hpp"

namespace convlab {

namespace {
thread_local ReuseTimingMemory* active_pool = nullptr;
}  // namespace

void TimingFree::operator()(float* p) const {
  if (p == nullptr) return;
  if (pool != nullptr && pool == active_pool) {
    pool->free_.push_back({p, capacity});
    return;
  }
  detail::AlignedFree{}(p);
}

TimingFloats timing_floats(std::size_t count) {
  count = std::max<std::size_t>(count, 1);
  ReuseTimingMemory* pool = active_pool;
  if (pool != nullptr) {
    auto& free = pool->free_;
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it)
      if (it->capacity >= count && (best == free.end() || it->capacity < best->capacity)) best = it;
    if (best != free.end()) {
      const ReuseTimingMemory::Block block = *best;
      free.erase(best);
      std::memset(block.data, 0, block.capacity * sizeof(float));
      return TimingFloats(block.data, {pool, block.capacity});
    }
  }
  return TimingFloats(aligned_floats(count).release(), {pool, count});  // zeroed, every page touched
}

ReuseTimingMemory::ReuseTimingMemory() : active_(active_pool == nullptr) {
  if (active_) active_pool = this;
}

ReuseTimingMemory::~ReuseTimingMemory() {
  if (!active_) return;
  active_pool = nullptr;
  for (const Block& b : free_) detail::AlignedFree{}(b.data);
}

}  // namespace convlab
