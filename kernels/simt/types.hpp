// CUDA's vector and launch-shape types for code compiled without nvcc: the emulator and the host
// code that launches emulated kernels. Plain aggregates (dim3 aside), aligned as CUDA aligns them,
// so that `__shared__ float4 tile[...]` needs no constructor and float4 loads keep their layout.
#pragma once

#if defined(__CUDACC__)
#error "kernels/simt/types.hpp is for plain C++ builds; under nvcc <cuda_runtime.h> defines these"
#endif

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}  // NOLINT: implicit, as in CUDA
};

struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};

constexpr uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
constexpr int2 make_int2(int x, int y) { return {x, y}; }
constexpr int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
constexpr float2 make_float2(float x, float y) { return {x, y}; }
constexpr float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
