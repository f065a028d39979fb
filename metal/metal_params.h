// The parameter blocks convlab's Metal kernels receive ([[buffer(n)]] `constant` structs), in
// one header that both the MSL compiler and the C++ host include: plain ints, the same layout on
// both sides. Shapes are 32-bit, as for CUDA: plan refuses tensors of 2^31 elements or more.
// No name here may be an MSL keyword the emulator's shim defines (kernel, device, constant, ...).
#pragma once

struct MetalConv {
  int n, c, h, w;    // input, NCHW
  int k, r, s;       // output channels, kernel height and width
  int stride_h, stride_w, pad_h, pad_w;
  int dil_h, dil_w;  // the step between taps (1 = dense)
  int groups;
  int oh, ow;
  int activation;    // 0 none, 1 ReLU, 2 ReLU6
  int has_bias, has_residual;
};

struct MetalPool {  // max or average pooling, floor mode; planes = n * c
  int planes, h, w, oh, ow;
  int window, stride, pad;
  int average;
};

struct MetalRows {  // rows x length: global average pooling (planes x plane size), softmax
  int rows, length;
};

struct MetalLinear {
  int batch, in_features, out_features;
  int relu, has_bias;
};

struct MetalAdd {
  int count, relu;
};
