// The harness reads time through Clock so that tests can drive it with a fake one.
#pragma once

#include <chrono>
#include <cstdint>

namespace convlab {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t now_ns() = 0;  // monotonic
};

class SteadyClock final : public Clock {
 public:
  std::int64_t now_ns() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace convlab
