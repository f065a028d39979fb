// What `conv` times (bench/harness/conv_bench.cpp): one kernel planned for one problem, its output
// already checked against its precision's oracle. FP32 and int8 kernels differ in data and
// contract, not in how they are timed, so the timing loop sees only this.
#pragma once

#include <cstdint>
#include <memory>

#include "bench/harness/device.hpp"
#include "bench/report/results.hpp"
#include "kernels/common/int8_kernel.hpp"

namespace convlab {

struct PreparedConv {
  virtual ~PreparedConv() = default;
  virtual void run() const = 0;
  virtual bool changes_layout() const = 0;
  virtual void run_layout_changes_only() const = 0;
  Device* device = nullptr;  // what the harness synchronises around each run
};

// Plans an int8 kernel on make_int8_conv_data(p, seed), runs it once and compares its output with
// cpu.20_int8_reference's (every output, or a sample on large problems): fills r's memory
// account, r.accuracy (in quanta) and r.error when it differs by more than the kernel's max_quanta.
// A GPU kernel runs on device buffers (the input uploaded once); `gpu` is made with the first.
std::unique_ptr<PreparedConv> prepare_int8(const Int8KernelInfo& info, const ConvProblem& p, std::uint64_t seed,
                                           Device& cpu, std::unique_ptr<Device>& gpu, Result& r);

}  // namespace convlab
