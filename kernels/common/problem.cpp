#include "kernels/common/problem.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <initializer_list>
#include <optional>

#include <fmt/format.h>

#include "kernels/common/error.hpp"

namespace convlab {

namespace {

std::int64_t out_size(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad_begin,
                      std::int64_t pad_end, std::int64_t dilation) {
  const std::int64_t extent = (kernel - 1) * dilation + 1;
  const std::int64_t span = in + pad_begin + pad_end - extent;
  return span < 0 || stride < 1 ? 0 : span / stride + 1;
}

// The least end padding (0 or more) that gives `out` outputs: where it can, the last window ends on
// the last padded row. When 0 is still too much, `out` comes out of the floor division.
std::int64_t least_end_pad(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad_begin,
                           std::int64_t dilation, std::int64_t out) {
  return std::max<std::int64_t>(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad_begin);
}

// The canonical end-padding delta (problem.hpp, with_end_padding).
std::int64_t end_pad_delta(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad_begin,
                           std::int64_t pad_end, std::int64_t dilation) {
  const std::int64_t out = out_size(in, kernel, stride, pad_begin, pad_end, dilation);
  if (out == out_size(in, kernel, stride, pad_begin, pad_begin, dilation)) return 0;
  if (out < 1) return pad_end - pad_begin;  // no convolution: validate() says so
  return least_end_pad(in, kernel, stride, pad_begin, dilation, out) - pad_begin;
}

// The descriptor keys, in the order benchdnn prints them. Width fields follow their height twin.
enum Field { G, MB, IC, IH, IW, OC, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, FIELD_COUNT };
constexpr std::array<std::string_view, FIELD_COUNT> kKeys = {
    "g", "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};

std::optional<Field> find_key(std::string_view key) {
  for (int i = 0; i < FIELD_COUNT; ++i)
    if (kKeys[i] == key) return static_cast<Field>(i);
  return std::nullopt;
}

}  // namespace

std::int64_t ConvProblem::out_h() const { return out_size(h, r, stride_h, pad_h, pad_bottom(), dilation_h); }
std::int64_t ConvProblem::out_w() const { return out_size(w, s, stride_w, pad_w, pad_right(), dilation_w); }

double ConvProblem::flops() const {
  return 2.0 * static_cast<double>(output_elems()) * static_cast<double>(c_per_group() * r * s);
}

double ConvProblem::bytes() const {
  return 4.0 * static_cast<double>(input_elems() + weight_elems() + k + output_elems());
}

ConvProblem ConvProblem::with_batch(std::int64_t batch) const {
  ConvProblem p = *this;
  p.n = batch;
  return p;
}

ConvProblem ConvProblem::with_end_padding(std::int64_t bottom, std::int64_t right) const {
  ConvProblem p = *this;
  p.pad_bottom_delta = end_pad_delta(h, r, stride_h, pad_h, bottom, dilation_h);
  p.pad_right_delta = end_pad_delta(w, s, stride_w, pad_w, right, dilation_w);
  return p;
}

void ConvProblem::validate(std::string_view descriptor) const {
  // Ranges first: the messages below print the problem, which computes its output size.
  const std::pair<std::string_view, std::int64_t> fields[] = {
      {"ic", c},       {"ih", h},       {"iw", w},  {"oc", k},  {"kh", r},  {"kw", s},  {"sh", stride_h},
      {"sw", stride_w}, {"ph", pad_h}, {"pw", pad_w},
      {"the bottom padding", pad_bottom_delta}, {"the right padding", pad_right_delta},  // as deltas: cannot overflow
      {"dh", dilation_h - 1}, {"dw", dilation_w - 1}, {"g", groups}};  // dh, dw as written: benchdnn's
  for (const auto& [key, value] : fields)
    if (value > kMaxProblemField || value < -kMaxProblemField)
      throw InputError(fmt::format("invalid convolution: {} {} is out of range (at most {})", key, value, kMaxProblemField));
  if (n > kMaxBatch) throw InputError(fmt::format("invalid convolution: mb {} is out of range (at most {})", n, kMaxBatch));
  auto require = [&](bool ok, std::string_view what) {
    if (ok) return;
    if (!descriptor.empty()) throw InputError(fmt::format("bad problem descriptor '{}': {}", descriptor, what));
    throw InputError(fmt::format("invalid convolution {}: {}", to_string(*this), what));
  };
  require(n >= 1, "mb must be at least 1");
  require(c >= 1 && k >= 1, "ic and oc must be at least 1");
  require(h >= 1 && w >= 1, "ih and iw must be at least 1");
  require(r >= 1 && s >= 1, "kh and kw must be at least 1");
  require(stride_h >= 1 && stride_w >= 1, "sh and sw must be at least 1");
  require(pad_h >= 0 && pad_w >= 0, "ph and pw must not be negative");
  require(pad_bottom() >= 0 && pad_right() >= 0, "the bottom and right padding must not be negative");
  require(dilation_h >= 1 && dilation_w >= 1, "dh and dw must not be negative");
  require(groups >= 1, "g must be at least 1");
  require(c % groups == 0, fmt::format("ic {} is not divisible by g {}", c, groups));
  require(k % groups == 0, fmt::format("oc {} is not divisible by g {}", k, groups));
  require(out_h() >= 1 && out_w() >= 1, "the kernel (with dilation) is larger than the padded input");
  // In double: the int64 products are what must not overflow.
  auto elems = [](std::initializer_list<std::int64_t> dims) {
    double product = 1;
    for (const std::int64_t d : dims) product *= static_cast<double>(d);
    return product;
  };
  require(elems({n, c, h, w}) <= kMaxTensorElems && elems({n, k, out_h(), out_w()}) <= kMaxTensorElems &&
              elems({k, c_per_group(), r, s}) <= kMaxTensorElems,
          "a tensor would exceed 2^56 elements");
}

ConvProblem parse_problem(std::string_view text) {
  std::array<std::optional<std::int64_t>, FIELD_COUNT> v{};
  std::array<std::string_view, FIELD_COUNT> token{};  // as written, for error messages
  ConvProblem p;
  auto fail = [&](std::string_view tok, std::string_view why) -> InputError {
    return InputError(fmt::format("bad problem descriptor '{}': token '{}' {}", text, tok, why));
  };

  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '_') { ++i; continue; }
    const std::size_t start = i;
    while (i < text.size() && std::islower(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view key = text.substr(start, i - start);
    if (key == "n") {  // name: n"quoted" or the rest of the descriptor
      std::string_view rest = text.substr(i);
      if (!rest.empty() && rest.front() == '"') {
        const std::size_t close = rest.find('"', 1);
        if (close == std::string_view::npos) throw fail(text.substr(start), "has no closing quote");
        p.name = std::string(rest.substr(1, close - 1));
        i += close + 1;
      } else {
        p.name = std::string(rest);
        i = text.size();
      }
      continue;
    }
    const std::size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view tok = text.substr(start, i - start);
    if (key.empty()) throw fail(text.substr(start, std::max<std::size_t>(i - start, 1)), "has no field name");
    const auto field = find_key(key);
    if (!field) {
      const bool is_3d = key == "id" || key == "od" || key == "kd" || key == "sd" || key == "pd" || key == "dd";
      throw fail(tok, is_3d ? "is a depth field; only 2-D convolutions are supported"
                            : "is not a field (expected g, mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, n)");
    }
    if (digits == i) throw fail(tok, "has no value");
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data() + digits, text.data() + i, value);
    if (ec != std::errc() || end != text.data() + i || value > kMaxBatch)
      throw fail(tok, "is out of range");  // validate() below applies each field's own limit
    if (v[*field]) throw fail(tok, "repeats a field");
    v[*field] = value;
    token[*field] = tok;
  }

  if (!v[IC]) throw fail(text, "lacks ic (input channels)");
  if (!v[OC]) throw fail(text, "lacks oc (output channels)");
  if (!v[IH] && !v[IW]) throw fail(text, "lacks ih (input height)");
  if (!v[KH] && !v[KW]) throw fail(text, "lacks kh (kernel height)");

  // Square defaults: a width field left out takes its height twin, and vice versa.
  for (Field hf : {IH, OH, KH, SH, PH, DH}) {
    const auto wf = static_cast<Field>(hf + 1);
    if (!v[wf] && v[hf]) v[wf] = v[hf];
    if (!v[hf] && v[wf]) v[hf] = v[wf];
  }
  p.groups = v[G].value_or(1);
  p.n = v[MB].value_or(2);
  p.c = *v[IC];
  p.k = *v[OC];
  p.h = *v[IH];
  p.w = *v[IW];
  p.r = *v[KH];
  p.s = *v[KW];
  p.stride_h = v[SH].value_or(1);
  p.stride_w = v[SW].value_or(1);
  p.dilation_h = v[DH].value_or(0) + 1;  // benchdnn's dh0 (dense) is PyTorch's dilation 1
  p.dilation_w = v[DW].value_or(0) + 1;
  // A given output size must be reachable: sized in double first, since each field is at most
  // 2^40 and (out - 1) * stride can pass 2^63 (found by tests/fuzz/fuzz_descriptor).
  for (auto [of, kf, sf, df] : {std::array{OH, KH, SH, DH}, std::array{OW, KW, SW, DW}}) {
    if (!v[of]) continue;
    const double size = (static_cast<double>(*v[of]) - 1) * static_cast<double>(v[sf].value_or(1)) +
                        static_cast<double>(*v[kf] - 1) * static_cast<double>(v[df].value_or(0) + 1);
    if (size > 0x1p61)
      throw fail(token[of].empty() ? token[of == OH ? OW : OH] : token[of],  // ow may be oh's twin
                 "implies a padding out of range");
  }
  for (auto [pf, of] : {std::pair{PH, OH}, std::pair{PW, OW}}) {
    // benchdnn deduces padding from a given output size when the padding is left out: half
    // before, the rest after.
    if (!v[pf] && v[of]) {
      const bool height = pf == PH;
      const std::int64_t in = height ? p.h : p.w, kernel = height ? p.r : p.s;
      const std::int64_t stride = height ? p.stride_h : p.stride_w;
      const std::int64_t dil = height ? p.dilation_h : p.dilation_w;
      const std::int64_t extent = (kernel - 1) * dil + 1;
      const std::int64_t pad = ((*v[of] - 1) * stride - in + extent) / 2;
      v[pf] = std::max<std::int64_t>(0, pad);
    }
  }
  p.pad_h = v[PH].value_or(0);
  p.pad_w = v[PW].value_or(0);
  if (p.stride_h == 0) throw fail(token[SH].empty() ? token[SW] : token[SH], "must be at least 1");
  if (p.stride_w == 0) throw fail(token[SW].empty() ? token[SH] : token[SW], "must be at least 1");
  // An output size the symmetric padding does not give sets the end padding (benchdnn's reading),
  // unless that would be negative. Checked in double: no overflow before validate() below.
  auto end_pad = [&](Field of, std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                     std::int64_t dil) {
    if (!v[of] || kernel < 1 || dil < 1) return pad;
    const double least = (static_cast<double>(*v[of]) - 1) * static_cast<double>(stride) +
                         static_cast<double>((kernel - 1) * dil + 1 - in - pad);
    if (least > static_cast<double>(kMaxProblemField)) return pad;  // out of range: the check below says so
    return least_end_pad(in, kernel, stride, pad, dil, *v[of]);  // may not give oh: the check below says so
  };
  // Only with a given output size (then oh and ow both are), whose check above bounds the products.
  if (v[OH] && v[OW] && p.r >= 1 && p.s >= 1 && p.h >= 1 && p.w >= 1)
    p = p.with_end_padding(end_pad(OH, p.h, p.r, p.stride_h, p.pad_h, p.dilation_h),
                           end_pad(OW, p.w, p.s, p.stride_w, p.pad_w, p.dilation_w));
  p.validate(text);
  // The output size the other fields give, with the formula, so the user sees which to change.
  const auto formula = [](char hw, std::int64_t in, std::int64_t pad, std::int64_t kernel, std::int64_t dil,
                          std::int64_t stride, std::int64_t given) {
    const std::int64_t out = out_size(in, kernel, stride, pad, pad, dil);
    return fmt::format("does not match the output {0} the other fields give: (i{1} + 2 p{1} - (k{1} - 1)(d{1} + 1) - 1) / "
                       "s{1} + 1 = ({2} + 2*{3} - {4}*{5} - 1) / {6} + 1 = {7}, and no padding of 0 or more after gives {8}",
                       hw == 'h' ? "height" : "width", hw, in, pad, kernel - 1, dil, stride, out, given);
  };
  if (v[OH] && *v[OH] != p.out_h())
    throw fail(token[OH].empty() ? token[OW] : token[OH],
               formula('h', p.h, p.pad_h, p.r, p.dilation_h, p.stride_h, *v[OH]));
  if (v[OW] && *v[OW] != p.out_w())
    throw fail(token[OW].empty() ? token[OH] : token[OW],
               formula('w', p.w, p.pad_w, p.s, p.dilation_w, p.stride_w, *v[OW]));
  return p;
}

std::string to_string(const ConvProblem& p) {
  std::string s;
  auto put = [&](std::string_view key, std::int64_t value) { s += fmt::format("{}{}", key, value); };
  if (p.groups != 1) put("g", p.groups);
  put("mb", p.n);
  put("ic", p.c);
  put("ih", p.h);
  if (p.w != p.h) put("iw", p.w);
  put("oc", p.k);
  put("oh", p.out_h());
  if (p.out_w() != p.out_h()) put("ow", p.out_w());
  put("kh", p.r);
  if (p.s != p.r) put("kw", p.s);
  if (p.stride_h != 1 || p.stride_w != 1) put("sh", p.stride_h);
  if (p.stride_w != p.stride_h) put("sw", p.stride_w);
  if (p.has_padding()) put("ph", p.pad_h);  // with oh, which gives the bottom padding
  if (p.pad_w != p.pad_h) put("pw", p.pad_w);
  if (p.dilation_h != 1 || p.dilation_w != 1) put("dh", p.dilation_h - 1);  // benchdnn's: dh0 = dense
  if (p.dilation_w != p.dilation_h) put("dw", p.dilation_w - 1);
  if (!p.name.empty()) s += fmt::format("n\"{}\"", p.name);
  return s;
}

}  // namespace convlab
