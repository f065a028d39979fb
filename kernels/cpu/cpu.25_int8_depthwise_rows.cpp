// cpu.25_int8_depthwise_rows: depthwise int8 convolution on u8 x s8 quads of kernel taps
// (vpdpbusd), one channel plane at a time, its outputs one flat run of vectors.
//
// What changes against cpu.22_int8_depthwise: the four bytes of an int32 lane are four taps of one
// output pixel, so one vpdpbusd does four of a pixel's taps for kLanes pixels, on the bytes as they
// are (cpu.22 widens to int16 pairs, two taps per instruction), and the zero point is cpu.23's
// compensation term. A stride-1 plane packs each input row once, its quads over kernel columns
// (3 x 3: one quad, a row of taps, 3 vpdpbusd per vector of outputs); a strided plane packs each
// output pixel's whole window (3 x 3: a quad per kernel row), so that every vector of outputs
// reads consecutive words whatever the stride. Either way the packed plane is laid out like the
// output plane: vector i of the outputs reads words [kLanes i, kLanes (i + 1)) of each step, and is
// one store into the NCHW plane.
// Why faster: per vector of 16 outputs, 3 vpdpbusd, a fraction of a packing gather and one
// requantisation, where cpu.22 did 6 vpmaddwd on a plane copied twice as int16 (no VNNI: int8_simd.hpp).
// With AVX-512 VBMI nothing is copied or packed for planes of at most 16 output columns (vpermi2b
// picks quads from padded rows in registers: run_in_registers), input planes of at most 64 bytes
// (one register, a table: run_plane_in_register) or wider strided ones (run_row_segments).
// Measured: against onednn.conv_int8, interleaved, batch 32: Ice Lake VM (VNNI, packed) 1.3x on
//   mobilenet-tiny's 32 x 32 maps, 0.45-1.05x on the small ones; Zen 3 VM (AVX2) 0.67-1.39x; Zen 5 VM
//   (VBMI, 2026-12-05) the 16- and 8-column layers 0.60-1.67x packed -> 1.05-3.98x in registers;
//   (2026-12-07) g960 7 x 7 0.89x -> 3.1x, the plane in one register; g384 14 x 14 1.15x -> 1.45x.
// Run: build/convlab conv --precision int8 --problem g64mb32ic64ih16oc64oh16kh3ph1 --kernel cpu.22_int8_depthwise,cpu.25_int8_depthwise_rows,onednn.conv_int8 --interleave
#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/cpu/int8_simd.hpp"

namespace convlab::cpu {

namespace {

using namespace int8;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class Int8DepthwiseRowsConv final : public PlannedInt8Conv {
 public:
  Int8DepthwiseRowsConv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e, int threads)
      : p_(p), oh_(p.out_h()), ow_(p.out_w()), threads_(threads),
        input_zero_point_(static_cast<std::uint8_t>(w.input.zero_point)) {
    // Quads over kernel columns (ceil(S / 4) per kernel row, a slot past S meeting weight 0): at
    // stride 1 a packed row per input row, kernel rows by offset; when rows are strided the whole
    // window, each kernel row's quads packed per output row. Each quad's bytes are neighbours in
    // an input row (without dilation), which gather_row_quads packs in a shuffle or two.
    whole_window_ = p.stride_h > 1;
    row_quads_ = ceil_div(p.s, 4);
    quads_ = (whole_window_ ? p.r : 1) * row_quads_;
    used_rows_ = (oh_ - 1) * p.stride_h + (p.r - 1) * p.dilation_h + 1;
    packed_rows_ = whole_window_ ? oh_ : used_rows_;
    const std::int64_t plane = packed_rows_ * ow_;
    for (std::int64_t q = 0; q < quads_; ++q)
      for (std::int64_t r = 0; r < (whole_window_ ? 1 : p.r); ++r) steps_.push_back(q * plane + r * p.dilation_h * ow_);
    // Weights: per channel, a word per step (the quad's four s8 weights, 0 past the window).
    const std::int64_t steps = static_cast<std::int64_t>(steps_.size());
    weights_.assign(static_cast<std::size_t>(p.k * steps), 0);
    compensation_.assign(static_cast<std::size_t>(p.k), 0);
    auto* bytes = reinterpret_cast<std::int8_t*>(weights_.data());
    for (std::int64_t k = 0; k < p.k; ++k)
      for (std::int64_t r = 0; r < p.r; ++r)
        for (std::int64_t s = 0; s < p.s; ++s) {
          const std::int64_t step = whole_window_ ? r * row_quads_ + s / 4 : s / 4 * p.r + r;
          const std::int8_t v = w.weight[static_cast<std::size_t>((k * p.r + r) * p.s + s)];
          bytes[(k * steps + step) * 4 + s % 4] = v;
          compensation_[static_cast<std::size_t>(k)] += w.input.zero_point * v;
        }
    requantize_ = make_requantization(w, p.k, e.activation);
#if defined(__AVX512VBMI__)
    // Step t's kernel row and quad, as the weights are packed above.
    const auto step_row_and_quad = [&](std::int64_t t) {
      return whole_window_ ? std::pair{t / row_quads_, t % row_quads_} : std::pair{t % p.r, t / p.r};
    };
    // Input planes of at most 64 bytes: see run_plane_in_register.
    const std::int64_t out_vectors = ceil_div(oh_ * ow_, kLanes);
    if (p.h * p.w <= 64 && out_vectors * steps <= 64) {
      plane_in_register_ = true;
      for (std::int64_t i = 0; i < out_vectors; ++i)
        for (std::int64_t t = 0; t < steps; ++t) {
          const auto [r, q] = step_row_and_quad(t);
          std::array<std::uint8_t, 64> index;
          index.fill(64);  // byte 0 of the second table: the zero point (padding, slots past S, lanes past the plane)
          for (std::int64_t l = 0; l < kLanes && kLanes * i + l < oh_ * ow_; ++l)
            for (std::int64_t j = 0; j < 4 && 4 * q + j < p.s; ++j) {
              const std::int64_t o = kLanes * i + l, y = o / ow_ * p.stride_h - p.pad_h + r * p.dilation_h;
              const std::int64_t x = o % ow_ * p.stride_w - p.pad_w + (4 * q + j) * p.dilation_w;
              if (y >= 0 && y < p.h && x >= 0 && x < p.w) index[static_cast<std::size_t>(4 * l + j)] = static_cast<std::uint8_t>(y * p.w + x);
            }
          plane_index_.push_back(index);
        }
    }
    // Vectors whose quads come from input rows in registers: planes of at most 16 output columns
    // whose padded rows fit one vector, two output rows a vector where two fit (run_in_registers);
    // wider strided planes whose 16 outputs of a row read at most 64 bytes of an input row, 16
    // columns of one row (run_row_segments; at stride 1 the packed path's quads serve every kernel
    // row, and it was faster).
    const std::int64_t last_column = (ow_ - 1) * p.stride_w + (p.s - 1) * p.dilation_w;
    in_registers_ = ow_ <= kLanes && p.pad_w + p.w <= 64 && last_column < 64;
    row_segments_ = !in_registers_ && whole_window_ && (kLanes - 1) * p.stride_w + (p.s - 1) * p.dilation_w < 64;
    if (in_registers_) rows_per_vector_ = std::min<std::int64_t>(2, kLanes / ow_);
    if (in_registers_ || row_segments_) {
      for (std::int64_t t = 0; t < steps; ++t) {
        const auto [r, q] = step_row_and_quad(t);
        step_rows_.push_back(r * p.dilation_h);
        std::array<std::uint8_t, 64> index{};
        for (int l = 0; l < kLanes; ++l)
          for (int j = 0; j < 4; ++j) {  // slots past S read any byte: their weight is 0
            const std::int64_t tap = std::min<std::int64_t>(4 * q + j, p.s - 1);
            const std::int64_t lane = l % (rows_per_vector_ * ow_);  // lanes past the rows: not stored
            const std::int64_t column = (lane % ow_) * p.stride_w + tap * p.dilation_w;
            index[static_cast<std::size_t>(4 * l + j)] = static_cast<std::uint8_t>(lane / ow_ * 64 + column);
          }
        step_index_.push_back(index);
      }
    }
#endif
    const std::int64_t columns = ceil_div(ow_, kLanes) * kLanes;
    source_row_ = ceil_div(std::max(columns * p.stride_w + (4 * row_quads_ - 1) * p.dilation_w, p.pad_w + p.w), 16) * 16;
    // Where each slot of each quad reads, from the first source row of its packed row; a slot
    // past the kernel's columns reads on along the row (its weight is 0).
    for (std::int64_t slot = 0; slot < quads_ * 4; ++slot) {
      const std::int64_t q = slot / 4, r = whole_window_ ? q / row_quads_ : 0, s = q % row_quads_ * 4 + slot % 4;
      slot_offsets_.push_back(r * p.dilation_h * source_row_ + s * p.dilation_w);
    }
  }

  std::size_t weight_bytes() const override { return (weights_.size() + compensation_.size()) * 4 + 2 * requantize_.multiplier.size() * 4; }
  // Per thread: one channel's padded input rows (bytes) and its packed quads (words).
  std::size_t workspace_bytes() const override { return static_cast<std::size_t>(threads_ * thread_bytes()) + 64; }

  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
#if defined(__AVX512VBMI__)
    const bool three_steps = steps_.size() == 3;  // 3 x 3: the step loops unrolled
    if (plane_in_register_) return three_steps ? run_plane_in_register<3>(input, output) : run_plane_in_register<0>(input, output);
    if (in_registers_ && rows_per_vector_ == 2) return three_steps ? run_in_registers<3, 2>(input, output) : run_in_registers<0, 2>(input, output);
    if (in_registers_) return three_steps ? run_in_registers<3, 1>(input, output) : run_in_registers<0, 1>(input, output);
    if (row_segments_) return three_steps ? run_row_segments<3>(input, output) : run_row_segments<0>(input, output);
#endif
    auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(workspace) + 63) / 64 * 64);
    const std::int64_t planes = p_.n * p_.c, steps = static_cast<std::int64_t>(steps_.size());
    const std::int64_t vectors = ceil_div(oh_ * ow_, kLanes), tail = oh_ * ow_ - (vectors - 1) * kLanes;
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    const bool seven_bit = seven_bit_input(input, p_.input_elems(), input_zero_point_);
#pragma omp parallel num_threads(threads_)
    {
      std::uint8_t* rows = base + omp_get_thread_num() * thread_bytes();
      auto* packed = reinterpret_cast<std::int32_t*>(rows + source_bytes());
      // The slack past the packed plane, read only by lanes that are not stored: zeroed once per
      // run, not per plane (a call per 8 x 8 plane); the packing's overrun writes bytes there.
      std::fill(packed + quads_ * packed_rows_ * ow_, packed + packed_words(), 0);
#pragma omp for schedule(static)
      for (std::int64_t plane = 0; plane < planes; ++plane) {
        const std::int64_t k = plane % p_.c;
        pack_plane(input + plane * p_.h * p_.w, rows, packed);
        const std::int32_t* w = weights_.data() + k * steps;
        const IVec comp = splat(compensation_[static_cast<std::size_t>(k)]);
        const float m = requantize_.multiplier[static_cast<std::size_t>(k)], o = requantize_.offset[static_cast<std::size_t>(k)];
        std::uint8_t* out = output + plane * oh_ * ow_;
        const auto run_vectors = [&]<bool kSevenBit>(std::bool_constant<kSevenBit>) {
          for (std::int64_t i = 0; i < vectors; ++i) {
            const std::int32_t* in = packed + i * kLanes;
            IVec acc = zero();
            if (steps == 3) {  // 3 x 3 (a row of taps per step, or three quads of the window): a loop
              // of constant trip count, unrolled; the run-time loop ran 0.70-0.86x as fast (batch 32)
              for (int t = 0; t < 3; ++t) acc = dot4<kSevenBit>(acc, load(in + steps_[static_cast<std::size_t>(t)]), splat(w[t]));
            } else {
              for (std::int64_t t = 0; t < steps; ++t) acc = dot4<kSevenBit>(acc, load(in + steps_[static_cast<std::size_t>(t)]), splat(w[t]));
            }
            const IVec q = requantize_channel(sub(acc, comp), m, o, zp, lo, hi);
            store_bytes(q, 0, i + 1 < vectors ? kLanes : static_cast<int>(tail), out + i * kLanes);
          }
        };
        if (seven_bit) {
          run_vectors(std::true_type{});
        } else {
          run_vectors(std::false_type{});
        }
      }
    }
  }

 private:
#if defined(__AVX512VBMI__)
  // Small planes (at most 16 output columns), with nothing copied or packed: a vector of outputs is
  // two output rows (of at most 8 columns) or one, and for each step (a kernel row's quad) one vpermi2b
  // picks its lanes' quads from the two padded input rows it reads, each a masked load of the
  // input row into a vector of zero points. The packed path's stores of overlapping vectors (an
  // 8-word row a 16-word store) made the loads that read them back wait for the stores.
  // kSteps as run_plane_in_register's; kRows: output rows per vector.
  template <int kSteps, int kRows>
  void run_in_registers(const std::uint8_t* input, std::uint8_t* output) const {
    const std::int64_t steps = kSteps > 0 ? kSteps : static_cast<std::int64_t>(steps_.size()), vectors = ceil_div(oh_, kRows);
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    const __m512i padding = _mm512_set1_epi8(static_cast<char>(input_zero_point_));
    const __mmask64 columns = (p_.w == 64 ? ~0ull : (1ull << p_.w) - 1) << p_.pad_w;
#pragma omp parallel num_threads(threads_)
    for_thread_planes([&](std::int64_t plane, std::int64_t k) {
      const std::uint8_t* in = input + plane * p_.h * p_.w;
      // Padded row u of the plane: the zero point, the input row at pad_w (the address made as an
      // integer, as copy_padded_row's: no pointer may point before the input).
      const auto padded_row = [&](std::int64_t u) {
        const std::int64_t y = u - p_.pad_h;
        if (y < 0 || y >= p_.h) return padding;
        const auto from = reinterpret_cast<std::uintptr_t>(in + y * p_.w) - static_cast<std::uintptr_t>(p_.pad_w);
        return _mm512_mask_loadu_epi8(padding, columns, reinterpret_cast<const void*>(from));
      };
      const std::int32_t* w = weights_.data() + k * steps;
      const IVec comp = splat(compensation_[static_cast<std::size_t>(k)]);
      const auto ks = static_cast<std::size_t>(k);
      const float m = requantize_.multiplier[ks], o = requantize_.offset[ks];
      std::uint8_t* out = output + plane * oh_ * ow_;
      for (std::int64_t i = 0; i < vectors; ++i) {
        const std::int64_t y0 = i * kRows;
        IVec acc = zero();
        for (std::int64_t t = 0; t < steps; ++t) {
          const std::int64_t u = y0 * p_.stride_h + step_rows_[static_cast<std::size_t>(t)];
          const __m512i index = _mm512_loadu_si512(step_index_[static_cast<std::size_t>(t)].data());
          const __m512i quads = kRows == 2 ? _mm512_permutex2var_epi8(padded_row(u), index, padded_row(u + p_.stride_h))
                                           : _mm512_permutexvar_epi8(index, padded_row(u));
          acc = dot4_add(acc, quads, splat(w[t]));
        }
        const IVec q = requantize_channel(sub(acc, comp), m, o, zp, lo, hi);
        const std::int64_t count = std::min<std::int64_t>(kRows, oh_ - y0) * ow_;
        store_bytes(q, 0, static_cast<int>(count), out + y0 * ow_);
      }
    });
  }
  // Strided planes wider than 16 output columns, nothing copied or packed: a vector is 16 columns
  // of an output row, and for each step one vpermb picks their quads from the 64 bytes of the input
  // row they read (a masked load into a vector of zero points). The packed path writes and reads
  // back a whole window's quads per output, a word per step.
  template <int kSteps>
  void run_row_segments(const std::uint8_t* input, std::uint8_t* output) const {
    // Locals, not members, in the loops: every byte store may alias a member, which GCC then reloads.
    const std::int64_t steps = kSteps > 0 ? kSteps : static_cast<std::int64_t>(steps_.size());
    const std::int64_t h = p_.h, w = p_.w, oh = oh_, ow = ow_, stride_h = p_.stride_h, stride_w = p_.stride_w;
    const std::int64_t pad_h = p_.pad_h, pad_w = p_.pad_w;
    const std::int64_t* step_rows = step_rows_.data();
    const auto* step_index = reinterpret_cast<const __m512i*>(step_index_.data());
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    const __m512i padding = _mm512_set1_epi8(static_cast<char>(input_zero_point_));
    const auto below = [](std::int64_t n) { return n >= 64 ? ~0ull : n <= 0 ? 0ull : (1ull << n) - 1; };
#pragma omp parallel num_threads(threads_)
    for_thread_planes([=, this](std::int64_t plane, std::int64_t k) {
      const std::uint8_t* in = input + plane * h * w;
      const std::int32_t* wk = weights_.data() + k * steps;
      const IVec comp = splat(compensation_[static_cast<std::size_t>(k)]);
      const float m = requantize_.multiplier[static_cast<std::size_t>(k)], o = requantize_.offset[static_cast<std::size_t>(k)];
      std::uint8_t* out = output + plane * oh * ow;
      for (std::int64_t oy = 0; oy < oh; ++oy)
        for (std::int64_t x0 = 0; x0 < ow; x0 += kLanes) {
          // Bytes [base, base + 64) of each input row read; bit j of mask: column base + j in [0, W).
          const std::int64_t base = x0 * stride_w - pad_w;
          const __mmask64 mask = below(w - base) & ~below(-base);
          IVec acc = zero();
          for (std::int64_t t = 0; t < steps; ++t) {
            const std::int64_t y = oy * stride_h - pad_h + step_rows[t];
            __m512i row = padding;
            if (y >= 0 && y < h) {  // the address made as an integer: no pointer before the input
              const auto from = reinterpret_cast<std::uintptr_t>(in + y * w) + static_cast<std::uintptr_t>(base);
              row = _mm512_mask_loadu_epi8(padding, mask, reinterpret_cast<const void*>(from));
            }
            acc = dot4_add(acc, _mm512_permutexvar_epi8(_mm512_loadu_si512(step_index + t), row), splat(wk[t]));
          }
          const IVec q = requantize_channel(sub(acc, comp), m, o, zp, lo, hi);
          store_bytes(q, 0, static_cast<int>(std::min<std::int64_t>(kLanes, ow - x0)), out + oy * ow + x0);
        }
    });
  }
  // Inside a parallel region: each thread's contiguous run of the n x C planes, f(plane, channel)
  // on each, the channel counted on (a division per plane cost as much as a small plane's work).
  template <typename F>
  void for_thread_planes(F f) const {
    const std::int64_t planes = p_.n * p_.c, team = omp_get_num_threads(), me = omp_get_thread_num();
    const std::int64_t begin = planes * me / team, end = planes * (me + 1) / team;
    for (std::int64_t plane = begin, k = begin % p_.c; plane < end; ++plane, k = k + 1 == p_.c ? 0 : k + 1) f(plane, k);
  }
  // Input planes of at most 64 bytes (7 x 7, 8 x 8), each one masked load: per vector of outputs and
  // step, one vpermi2b picks its quads from the plane and a vector of zero points (index 64 on, for
  // padding), by a table made in plan. The row path above (a branch and a masked load per row and
  // step, a division per plane) spent about 200 cycles on a 7 x 7 plane's 4 vectors of outputs.
  // kSteps: 3 (3 x 3), unrolled; 0 any other count. dot4_add is exact on every input, and with
  // VNNI (every VBMI CPU but Cannon Lake) one vpdpbusd: no seven-bit path, no scan of the input.
  template <int kSteps>
  void run_plane_in_register(const std::uint8_t* input, std::uint8_t* output) const {
    const std::int64_t steps = kSteps > 0 ? kSteps : static_cast<std::int64_t>(steps_.size());
    const std::int64_t pixels = oh_ * ow_, vectors = ceil_div(pixels, kLanes), plane_bytes = p_.h * p_.w;
    const IVec zp = splat(requantize_.zero_point), lo = splat(requantize_.lo), hi = splat(requantize_.hi);
    const __m512i padding = _mm512_set1_epi8(static_cast<char>(input_zero_point_));
    const __mmask64 plane_mask = plane_bytes == 64 ? ~0ull : (1ull << plane_bytes) - 1;
    const auto* index = reinterpret_cast<const __m512i*>(plane_index_.data());
#pragma omp parallel num_threads(threads_)
    for_thread_planes([&](std::int64_t plane, std::int64_t k) {
      const __m512i bytes = _mm512_maskz_loadu_epi8(plane_mask, input + plane * plane_bytes);
      const std::int32_t* w = weights_.data() + k * steps;
      const IVec comp = splat(compensation_[static_cast<std::size_t>(k)]);
      const float m = requantize_.multiplier[static_cast<std::size_t>(k)], o = requantize_.offset[static_cast<std::size_t>(k)];
      std::uint8_t* out = output + plane * pixels;
      for (std::int64_t i = 0; i < vectors; ++i) {
        IVec acc = zero();
        for (std::int64_t t = 0; t < steps; ++t)
          acc = dot4_add(acc, _mm512_permutex2var_epi8(bytes, _mm512_loadu_si512(index + i * steps + t), padding), splat(w[t]));
        const IVec q = requantize_channel(sub(acc, comp), m, o, zp, lo, hi);
        store_bytes(q, 0, static_cast<int>(std::min<std::int64_t>(kLanes, pixels - i * kLanes)), out + i * kLanes);
      }
    });
  }
  bool plane_in_register_ = false;
  std::vector<std::array<std::uint8_t, 64>> plane_index_;  // per vector of outputs and step: vpermi2b's byte index
  bool in_registers_ = false, row_segments_ = false;
  std::int64_t rows_per_vector_ = 1;  // in registers: output rows per vector
  std::vector<std::int64_t> step_rows_;                  // per step: its kernel row x the dilation (rows)
  std::vector<std::array<std::uint8_t, 64>> step_index_;  // per step: vpermi2b's byte index
#endif
  std::int64_t source_bytes() const { return ceil_div(used_rows_ * source_row_ + kPaddedRowSlack, 64) * 64; }
  // Packed quads, then a vector of slack: the last vector's lanes past the plane read it.
  std::int64_t packed_words() const { return quads_ * packed_rows_ * ow_ + 2 * kLanes; }
  std::int64_t thread_bytes() const { return source_bytes() + ceil_div(packed_words() * 4, 64) * 64; }

  // One channel's input rows, padded with the zero point, then their quads.
  void pack_plane(const std::uint8_t* plane, std::uint8_t* rows, std::int32_t* packed) const {
    for (std::int64_t b = 0; b < used_rows_; ++b) {
      const std::int64_t y = b - p_.pad_h;
      copy_padded_row(rows + b * source_row_, source_row_, y < 0 || y >= p_.h ? nullptr : plane + y * p_.w, p_.w, p_.pad_w,
                      input_zero_point_);
    }
    const std::int64_t row_step = (whole_window_ ? p_.stride_h : 1) * source_row_;
    for (std::int64_t q = 0; q < quads_; ++q)
      for (std::int64_t b = 0; b < packed_rows_; ++b) {
        const std::uint8_t* src[4];
        for (int j = 0; j < 4; ++j) src[j] = rows + b * row_step + slot_offsets_[static_cast<std::size_t>(q * 4 + j)];
        std::int32_t* to = packed + (q * packed_rows_ + b) * ow_;
        // Vectors in order: each one's tail past the row is overwritten by the next row.
        if (p_.dilation_w == 1) {
          for (std::int64_t x = 0; x < ow_; x += kLanes) store(to + x, gather_row_quads(src[0], x, p_.stride_w));
        } else {
          for (std::int64_t x = 0; x < ow_; x += kLanes) store(to + x, gather_quads(src, x, p_.stride_w));
        }
      }
  }

  ConvProblem p_;
  std::int64_t oh_, ow_;
  int threads_;
  std::uint8_t input_zero_point_;
  bool whole_window_ = false;
  std::int64_t row_quads_ = 1;  // quads per kernel row
  std::int64_t quads_ = 0, used_rows_ = 0, packed_rows_ = 0, source_row_ = 0;
  std::vector<std::int64_t> steps_;         // per step: its offset in the packed plane
  std::vector<std::int64_t> slot_offsets_;  // per quad and byte: its offset in the padded rows
  std::vector<std::int32_t> weights_;       // [K][step] quads of s8 weights
  std::vector<std::int32_t> compensation_;  // zp * sum of each channel's weights
  Requantization requantize_;
};

}  // namespace

std::string int8_depthwise_rows_unsupported(const ConvProblem& p) {
  if (p.groups != p.c || p.k != p.c) return fmt::format("depthwise only (groups = C = K), got g{} C {} K {}", p.groups, p.c, p.k);
  return {};
}

std::unique_ptr<PlannedInt8Conv> int8_depthwise_rows_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  if (const std::string why = int8_depthwise_rows_unsupported(p); !why.empty())
    throw InputError(fmt::format("cpu.25_int8_depthwise_rows cannot run {}: {}", to_string(p), why));
  return std::make_unique<Int8DepthwiseRowsConv>(p, w, e, omp_get_max_threads());
}

}  // namespace convlab::cpu
