"""PyTorch's eager-mode post-training static quantisation of a twin (tools/torch_models.py), and the
int8 interchange file convlab reads (models/quantized_file.hpp) made from the converted model.

The recipe is PyTorch's own: fuse_modules (conv + BatchNorm [+ ReLU], BatchNorm folded in eval
mode), the `onednn` qconfig (quint8 activations from a HistogramObserver, qint8 weights per output
channel symmetric), calibration batches, convert. Which engine then runs the converted model is a
separate choice, because on a CPU without VNNI oneDNN's int8 convolution multiplies u8 x s8 pairs
with vpmaddubsw, whose int16 sums saturate: its outputs are then not the exact int32 arithmetic of
the scheme (measured on an AVX2 machine: up to 90 quanta off on 0.9% of lab-cnn's conv1). QNNPACK
accumulates exactly, so a reference made on such a CPU runs on qnnpack, the same quantised weights
and parameters. `engine_for_this_cpu` picks: onednn where the CPU has VNNI, else qnnpack.
"""
import os

import torch
import torch.ao.quantization as tq
from torch.ao.nn import quantized as nnq
from torch.nn.intrinsic import quantized as nniq

QUANTIZED_WEIGHTED = (nnq.Conv2d, nnq.Linear, nniq.LinearReLU)  # ConvReLU2d is an nnq.Conv2d


def cpu_has_vnni():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def engine_for_this_cpu():
    return "onednn" if cpu_has_vnni() and "onednn" in torch.backends.quantized.supported_engines else "qnnpack"


def quantize(model, calibration, engine, batch=16):
    """Quantises an eval-mode FP32 twin in place: fuse, observe `calibration` (N x C x H x W) in
    batches, convert for `engine`. Returns the converted model."""
    if engine not in torch.backends.quantized.supported_engines:
        raise SystemExit(f"this PyTorch has no quantised engine '{engine}' "
                         f"(it has {', '.join(torch.backends.quantized.supported_engines)})")
    torch.backends.quantized.engine = engine
    model.eval()
    model.qconfig = tq.get_default_qconfig("onednn")
    tq.fuse_modules(model, model.fusion, inplace=True)
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for chunk in calibration.split(batch):
            model(chunk)
    tq.convert(model, inplace=True)
    if engine == "qnnpack":
        # PyTorch 1.13's qnnpack clamp (quantised ReLU6) reads a channels-last input as if it were
        # contiguous and scrambles it; the convs before it return channels-last tensors.
        for m in model.modules():
            if isinstance(m, nnq.ReLU6):
                m.register_forward_pre_hook(lambda _, args: (args[0].contiguous(),))
    return model


def _scalar(value, dtype):
    return torch.tensor(float(value) if dtype == torch.float32 else int(value), dtype=dtype)


def interchange_tensors(model):
    """The tensors of convlab's int8 interchange file, by PyTorch module name."""
    out = {}
    for name, m in model.named_modules():
        if isinstance(m, QUANTIZED_WEIGHTED):
            w = m.weight()
            if w.qscheme() not in (torch.per_channel_symmetric, torch.per_channel_affine) or \
                    bool(w.q_per_channel_zero_points().ne(0).any()):
                raise SystemExit(f"{name}: weights must be per-channel symmetric (zero point 0), got {w.qscheme()}")
            out[f"{name}.weight"] = w.int_repr().contiguous()
            out[f"{name}.weight_scale"] = w.q_per_channel_scales().float()
            bias = m.bias()
            out[f"{name}.bias"] = bias.detach().float() if bias is not None else torch.zeros(w.shape[0])
            out[f"{name}.scale"] = _scalar(m.scale, torch.float32)
            out[f"{name}.zero_point"] = _scalar(m.zero_point, torch.int64)
        elif isinstance(m, (nnq.Quantize, nnq.QFunctional)):
            out[f"{name}.scale"] = _scalar(m.scale, torch.float32)
            out[f"{name}.zero_point"] = _scalar(m.zero_point, torch.int64)
    return out


def describe_engine(engine):
    why = "the CPU has VNNI" if engine == "onednn" and cpu_has_vnni() else \
        "no VNNI: oneDNN's int8 would saturate" if engine == "qnnpack" and not cpu_has_vnni() else "chosen"
    return f"{engine} ({why}; {os.uname().machine})"
