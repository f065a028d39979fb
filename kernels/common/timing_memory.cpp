#include "kernels/common/timing_memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "kernels/common/tensor.hpp"

namespace convlab {

namespace {
thread_local ReuseTimingMemory* active_pool = nullptr;

std::size_t padded_bytes(std::size_t count) {
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(float) - Tensor::kAlignment) throw std::bad_alloc();
  return (count * sizeof(float) + Tensor::kAlignment - 1) / Tensor::kAlignment * Tensor::kAlignment;
}
}  // namespace

void TimingFree::operator()(float* p) const {
  if (p == nullptr) return;
  if (pool != nullptr && pool == active_pool) {
    pool->free_.push_back({p, capacity});
    return;
  }
  std::free(p);
}

TimingFloats timing_floats(std::size_t count) {
  count = std::max<std::size_t>(count, 1);
  const std::size_t bytes = padded_bytes(count);
  ReuseTimingMemory* pool = active_pool;
  if (pool != nullptr) {
    auto& free = pool->free_;
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it)
      if (it->capacity >= count && (best == free.end() || it->capacity < best->capacity)) best = it;
    if (best != free.end()) {
      const ReuseTimingMemory::Block block = *best;
      free.erase(best);
      std::memset(block.data, 0, padded_bytes(block.capacity));
      return TimingFloats(block.data, {pool, block.capacity});
    }
  }
  void* p = std::aligned_alloc(Tensor::kAlignment, bytes);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);  // every page touched now, as aligned_floats does
  return TimingFloats(static_cast<float*>(p), {pool, count});
}

ReuseTimingMemory::ReuseTimingMemory() : active_(active_pool == nullptr) {
  if (active_) active_pool = this;
}

ReuseTimingMemory::~ReuseTimingMemory() {
  if (!active_) return;
  active_pool = nullptr;
  for (const Block& b : free_) std::free(b.data);
}

}  // namespace convlab
