// onednn.conv and onednn.conv_int8: the production baselines. The same ConvProblem through oneDNN's convolution
// primitive, the way a framework would call it: memory formats left to oneDNN (format `any`),
// primitive creation and the weight reorder in plan (not timed), the activation reorders
// NCHW -> oneDNN's layout -> NCHW inside run (timed, like ours), bias and activation fused as
// post-ops. oneDNN uses the same OpenMP runtime as convlab, so --threads governs it too.
#include <algorithm>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include <fmt/format.h>

#include "kernels/common/error.hpp"
#include "kernels/common/int8_kernel.hpp"
#include "kernels/common/kernel.hpp"

namespace convlab::baseline {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

std::size_t aligned(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

// The oneDNN convolution of one problem, in either precision: primitive, weight reorder and
// activation reorders, run on caller pointers (bytes or floats alike).
struct Spec {
  dt src, weight, dst;
  dnnl::primitive_attr attr;
  const void* weight_oihw;          // the user's weights, OIHW (or GOIHW), of type `weight`
  std::vector<float> bias;          // K values, f32
};

class OneDnnPrimitive {
 public:
  OneDnnPrimitive(const ConvProblem& p, Spec spec) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    const memory::dims src_dims = {p.n, p.c, p.h, p.w}, dst_dims = {p.n, p.k, p.out_h(), p.out_w()};
    const memory::dims weight_dims = p.groups == 1 ? memory::dims{p.k, p.c, p.r, p.s}
                                                   : memory::dims{p.groups, p.k_per_group(), p.c_per_group(), p.r, p.s};
    const tag weight_tag = p.groups == 1 ? tag::oihw : tag::goihw;
    user_src_ = memory({src_dims, spec.src, tag::nchw}, engine_, DNNL_MEMORY_NONE);
    user_dst_ = memory({dst_dims, spec.dst, tag::nchw}, engine_, DNNL_MEMORY_NONE);
    spec.attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // scratch comes from convlab's workspace

    const memory::desc any_src(src_dims, spec.src, tag::any), any_dst(dst_dims, spec.dst, tag::any);
    const memory::desc any_weight(weight_dims, spec.weight, tag::any), bias_md({p.k}, dt::f32, tag::x);
    // oneDNN counts dilation as benchdnn does (0 = dense), one less than ConvProblem's step.
    const memory::dims strides = {p.stride_h, p.stride_w}, dilates = {p.dilation_h - 1, p.dilation_w - 1};
    const memory::dims pad_begin = {p.pad_h, p.pad_w}, pad_end = {p.pad_bottom(), p.pad_right()};
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               any_src, any_weight, bias_md, any_dst, strides, dilates, pad_begin, pad_end);
    pd_ = dnnl::convolution_forward::primitive_desc(desc, spec.attr, engine_);
    conv_ = dnnl::convolution_forward(pd_);

    // Weights: reorder once into oneDNN's preferred layout; bias as given.
    memory user_weight_mem({weight_dims, spec.weight, weight_tag}, engine_, const_cast<void*>(spec.weight_oihw));
    weight_ = memory(pd_.weights_desc(), engine_);
    dnnl::reorder(user_weight_mem, weight_).execute(stream_, user_weight_mem, weight_);
    bias_ = memory(bias_md, engine_);
    std::copy(spec.bias.begin(), spec.bias.end(), static_cast<float*>(bias_.get_data_handle()));
    stream_.wait();

    // Activation buffers in oneDNN's layouts live in the caller's workspace, when they differ.
    reorder_src_ = pd_.src_desc() != user_src_.get_desc();
    reorder_dst_ = pd_.dst_desc() != user_dst_.get_desc();
    src_ = reorder_src_ ? memory(pd_.src_desc(), engine_, DNNL_MEMORY_NONE) : user_src_;
    dst_ = reorder_dst_ ? memory(pd_.dst_desc(), engine_, DNNL_MEMORY_NONE) : user_dst_;
    scratch_ = memory(pd_.scratchpad_desc(), engine_, DNNL_MEMORY_NONE);
    src_bytes_ = reorder_src_ ? aligned(pd_.src_desc().get_size()) : 0;
    dst_bytes_ = reorder_dst_ ? aligned(pd_.dst_desc().get_size()) : 0;
    workspace_ = src_bytes_ + dst_bytes_ + aligned(pd_.scratchpad_desc().get_size());
    if (reorder_src_) to_blocked_ = dnnl::reorder(user_src_, src_);
    if (reorder_dst_) to_nchw_ = dnnl::reorder(dst_, user_dst_);
    weight_bytes_ = pd_.weights_desc().get_size() + static_cast<std::size_t>(p.k) * sizeof(float);
  }

  std::size_t workspace_bytes() const { return workspace_; }
  std::size_t weight_bytes() const { return weight_bytes_; }
  bool changes_layout() const { return reorder_src_ || reorder_dst_; }

  void run(const void* input, void* output, void* workspace) const {
    bind(input, output, workspace);
    if (reorder_src_) to_blocked_.execute(stream_, user_src_, src_);
    conv_.execute(stream_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_WEIGHTS, weight_}, {DNNL_ARG_BIAS, bias_},
                            {DNNL_ARG_DST, dst_}, {DNNL_ARG_SCRATCHPAD, scratch_}});
    if (reorder_dst_) to_nchw_.execute(stream_, dst_, user_dst_);
    stream_.wait();
  }

  void run_layout_changes_only(const void* input, void* output, void* workspace) const {
    bind(input, output, workspace);
    if (reorder_src_) to_blocked_.execute(stream_, user_src_, src_);
    if (reorder_dst_) to_nchw_.execute(stream_, dst_, user_dst_);
    stream_.wait();
  }

 private:
  void bind(const void* input, void* output, void* workspace) const {
    auto* bytes = static_cast<char*>(workspace);
    user_src_.set_data_handle(const_cast<void*>(input));  // oneDNN's API is not const-correct
    user_dst_.set_data_handle(output);
    if (reorder_src_) src_.set_data_handle(bytes);
    if (reorder_dst_) dst_.set_data_handle(bytes + src_bytes_);
    scratch_.set_data_handle(bytes + src_bytes_ + dst_bytes_);
  }

  dnnl::engine engine_;
  mutable dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  dnnl::reorder to_blocked_, to_nchw_;
  mutable memory user_src_, user_dst_, src_, dst_;  // handles re-pointed at each run
  memory weight_, bias_, scratch_;
  bool reorder_src_ = false, reorder_dst_ = false;
  std::size_t src_bytes_ = 0, dst_bytes_ = 0, workspace_ = 0, weight_bytes_ = 0;
};

dnnl::post_ops activation_post_op(Activation a, float six) {
  dnnl::post_ops post_ops;
  if (a == Activation::relu) post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  if (a == Activation::relu6) post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, six);
  return post_ops;
}

class OneDnnConv final : public PlannedConv {
 public:
  OneDnnConv(const ConvProblem& p, const ConvWeights& w, Epilogue e) : conv_(p, spec(p, w, e)) {}

  std::size_t workspace_bytes() const override { return conv_.workspace_bytes(); }
  std::size_t weight_bytes() const override { return conv_.weight_bytes(); }
  void run(const float* input, float* output, void* workspace) const override { conv_.run(input, output, workspace); }
  bool changes_layout() const override { return conv_.changes_layout(); }
  void run_layout_changes_only(const float* input, float* output, void* workspace) const override {
    conv_.run_layout_changes_only(input, output, workspace);
  }

 private:
  static Spec spec(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
    Spec s{dt::f32, dt::f32, dt::f32, {}, w.weight.data(), std::vector<float>(static_cast<std::size_t>(p.k), 0.0f)};
    s.attr.set_post_ops(activation_post_op(e.activation, 6.0f));
    if (!w.bias.empty()) s.bias.assign(w.bias.begin(), w.bias.end());
    return s;
  }
  OneDnnPrimitive conv_;
};

// int8 as PyTorch's `onednn` engine calls it: u8 source with its zero point, s8 weights, per
// output channel scales, u8 destination with its zero point. oneDNN 2.x adds the f32 bias to the
// int32 accumulator before the output scale, so it is given in accumulator units,
// bias / (input scale x weight scale); the activation runs on the scaled value, before the
// destination zero point. The same real numbers as quantize.hpp's, rounded in another order:
// within a quantum of the oracle.
class OneDnnInt8Conv final : public PlannedInt8Conv {
 public:
  OneDnnInt8Conv(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) : conv_(p, spec(p, w, e)) {}

  std::size_t workspace_bytes() const override { return conv_.workspace_bytes(); }
  std::size_t weight_bytes() const override { return conv_.weight_bytes(); }
  void run(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    conv_.run(input, output, workspace);
  }
  bool changes_layout() const override { return conv_.changes_layout(); }
  void run_layout_changes_only(const std::uint8_t* input, std::uint8_t* output, void* workspace) const override {
    conv_.run_layout_changes_only(input, output, workspace);
  }

 private:
  static Spec spec(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
    Spec s{dt::u8, dt::s8, dt::u8, {}, w.weight.data(), std::vector<float>(static_cast<std::size_t>(p.k), 0.0f)};
    std::vector<float> scales(static_cast<std::size_t>(p.k));
    for (std::int64_t k = 0; k < p.k; ++k) {
      const float accumulator_scale = w.input.scale * w.weight_scale[k];
      scales[k] = accumulator_scale / w.output.scale;
      if (!w.bias.empty()) s.bias[k] = w.bias[k] / accumulator_scale;
    }
    s.attr.set_output_scales(1 << 1, scales);  // mask: one scale per output channel (dimension 1)
    s.attr.set_zero_points(DNNL_ARG_SRC, 0, {w.input.zero_point});
    s.attr.set_zero_points(DNNL_ARG_DST, 0, {w.output.zero_point});
    s.attr.set_post_ops(activation_post_op(e.activation, 6.0f / w.output.scale));
    return s;
  }
  OneDnnPrimitive conv_;
};

}  // namespace

std::string onednn_unsupported(const ConvProblem& p) {
  p.validate();
  return {};
}

std::unique_ptr<PlannedConv> onednn_plan(const ConvProblem& p, const ConvWeights& w, Epilogue e) {
  p.validate();
  check_weights(p, w);
  try {
    return std::make_unique<OneDnnConv>(p, w, e);
  } catch (const dnnl::error& err) {
    throw InputError(fmt::format("onednn.conv cannot plan {}: {}", to_string(p), err.what()));
  }
}

}  // namespace convlab::baseline

namespace convlab::baseline {

std::string onednn_int8_unsupported(const ConvProblem& p) {
  p.validate();
  return {};
}

std::unique_ptr<PlannedInt8Conv> onednn_int8_plan(const ConvProblem& p, const Int8ConvWeights& w, Epilogue e) {
  p.validate();
  check_int8_weights(p, w);
  try {
    return std::make_unique<OneDnnInt8Conv>(p, w, e);
  } catch (const dnnl::error& err) {
    throw InputError(fmt::format("onednn.conv_int8 cannot plan {}: {}", to_string(p), err.what()));
  }
}

}  // namespace convlab::baseline
