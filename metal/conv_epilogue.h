// What every Metal convolution does with its sum (MSL, included by the conv kernels):
// out = act(acc + bias[k] + residual[i]). NaN passes through the ReLU (a comparison with NaN is
// false), as on the CPU, so a broken input is never hidden.
#pragma once

#include "metal_params.h"

inline float conv_epilogue(constant MetalConv& p, device const float* bias, device const float* residual, int k,
                           uint i, float acc) {
  if (p.has_bias != 0) acc += bias[k];
  if (p.has_residual != 0) acc += residual[i];
  if (p.activation != 0) {
    acc = acc < 0.0f ? 0.0f : acc;
    if (p.activation == 2 && acc > 6.0f) acc = 6.0f;
  }
  return acc;
}
