#include "kernels/gpu/conv_kernel.hpp"

#include <limits>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab::gpu {

namespace {
template <class Row>
const Row& find_row(std::span<const Row> rows, std::string_view id, std::string_view what) {
  for (const Row& k : rows)
    if (k.id == id) return k;
  throw InputError(fmt::format("'{}' is not a {} kernel", id, what));
}
template <class Row>
std::string unsupported_row(const Row& kernel, const ConvProblem& p) {
  if (std::string why = exceeds_32bit_indices(p); !why.empty()) return why;
  return kernel.unsupported(p);
}
}  // namespace

const ConvKernel& find_kernel(std::span<const ConvKernel> rows, std::string_view id, std::string_view backend) {
  return find_row(rows, id, backend);
}
const Int8ConvKernel& find_kernel(std::span<const Int8ConvKernel> rows, std::string_view id, std::string_view backend) {
  return find_row(rows, id, fmt::format("{} int8", backend));
}

std::string unsupported(const ConvKernel& kernel, const ConvProblem& p) { return unsupported_row(kernel, p); }
std::string unsupported(const Int8ConvKernel& kernel, const ConvProblem& p) { return unsupported_row(kernel, p); }

std::string exceeds_32bit_indices(const ConvProblem& p) {
  constexpr long long kMaxElems = std::numeric_limits<int>::max();
  if (p.input_elems() > kMaxElems || p.output_elems() > kMaxElems || p.weight_elems() > kMaxElems)
    return "a tensor of 2^31 elements or more (the kernels index in 32 bits)";
  return {};
}

ConvShape to_shape(const ConvProblem& p) {
  const auto i = [](std::int64_t v) { return static_cast<int>(v); };
  return ConvShape{.n = i(p.n), .c = i(p.c), .h = i(p.h), .w = i(p.w), .k = i(p.k), .r = i(p.r), .s = i(p.s),
                   .stride_h = i(p.stride_h), .stride_w = i(p.stride_w), .pad_h = i(p.pad_h), .pad_w = i(p.pad_w),
                   .dil_h = i(p.dilation_h), .dil_w = i(p.dilation_w), .groups = i(p.groups),
                   .oh = i(p.out_h()), .ow = i(p.out_w())};
}

int to_act(Activation a) {
  switch (a) {
    case Activation::none: return kActNone;
    case Activation::relu: return kActRelu;
    case Activation::relu6: return kActRelu6;
  }
  return kActNone;
}

std::vector<float> oihw_weights(const ConvProblem&, std::span<const float> oihw) { return {oihw.begin(), oihw.end()}; }
std::size_t no_workspace(const ConvShape&) { return 0; }

}  // namespace convlab::gpu
