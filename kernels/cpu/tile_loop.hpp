// CONVLAB_TILE_LOOP, before every loop that indexes a register tile (an array of vectors: a
// kernel's accumulators, the vectors loaded for them) by its counter: the loop is unrolled before
// the compiler decides where the array lives, so that it can live in registers. GCC does so
// unasked; clang 14 unrolled the longer loops (a 2 x 14 tile's, an epilogue's over k blocks, one
// whose count is a run-time bound) only after it had left the whole tile on the stack, every
// accumulator loaded and stored again around its FMA or vpdpbusd: cpu.02, cpu.08 and cpu.24 ran
// 2.2-2.7x slower built by clang than by GCC on AVX-512. For the same reason:
// - such a loop keeps a constant count (a run-time bound becomes an `if` inside it);
// - a function that takes a tile by reference (an epilogue) is CONVLAB_TILE_INLINE: out of line,
//   the tile has an address, and lives in memory.
// Both are clang's only: applied to GCC they doubled cpu.02's code (GCC then inlined every
// epilogue), a change to the build every measurement was made on, for no gain it could show.
#pragma once

#if defined(__clang__)
#define CONVLAB_TILE_LOOP _Pragma("unroll")
#define CONVLAB_TILE_INLINE [[gnu::always_inline]]
#else
#define CONVLAB_TILE_LOOP
#define CONVLAB_TILE_INLINE
#endif
