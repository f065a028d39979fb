#include "kernels/cpu/winograd.hpp"

namespace convlab::cpu::winograd {

std::string unsupported(const ConvProblem& p) {
  if (p.r != 3 || p.s != 3) return fmt::format("kernel {}x{}: Winograd F(m, 3x3) needs 3x3", p.r, p.s);
  if (p.stride_h != 1 || p.stride_w != 1)
    return fmt::format("stride {}x{}: Winograd needs stride 1", p.stride_h, p.stride_w);
  if (p.dilation_h != 1 || p.dilation_w != 1)
    return fmt::format("dilation {}x{}: Winograd needs a dense kernel (dilation 1)", p.dilation_h, p.dilation_w);
  if (p.groups != 1) return fmt::format("groups = {}: this Winograd kernel needs groups = 1", p.groups);
  return {};
}

}  // namespace convlab::cpu::winograd
