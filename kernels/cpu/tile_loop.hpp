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

// CONVLAB_TILE_LOOP_GCC_TOO: the same for both compilers, on the loops that give a tile its first
// values and that store it (microkernel.hpp's tile for cpu.02 and the Winograd GEMMs, cpu.06,
// cpu.08). GCC left those rolled until after it had decided where the tile lives, so the whole tile
// lived on the stack: 24-28 vector stores of zeros before the first FMA, stores after the last and
// loads back (objdump), every tile; a reduction of 27 taps (C = 3) does 648 FMAs around them. Six
// alternating runs over the lab layers (Zen 5, each kernel against oneDNN in its run): cpu.06 13%,
// cpu.08 9-11%, cpu.02 2-7% faster. On every tile loop (CONVLAB_TILE_LOOP for GCC too) the int8
// kernels, whose tiles were in registers already, ran 2-5% slower: their code grew for nothing.
#define CONVLAB_TILE_LOOP_GCC_TOO _Pragma("GCC unroll 16")
