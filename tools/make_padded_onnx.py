#!/usr/bin/env python3
"""Writes the asymmetric-padding golden set, tests/data/onnx-padded/: a small PyTorch CNN whose
convolutions pad unevenly, as PyTorch users write it (F.pad before a Conv2d: 'same' padding for an
even kernel, TensorFlow's SAME for a stride-2 conv, a depthwise conv padded on one side only),
exported to ONNX (opset 13), with each conv's output a named graph output so that `convlab
validate` compares every layer:
  model.onnx          the graph (PyTorch computes F.pad's pads with ConstantOfShape, Concat,
                      Reshape, Slice, Transpose and Cast, which convlab folds at import)
  input.safetensors   `input`, 2 x 3 x 16 x 16
  expect.safetensors  `output` (10 logits) and each layer's output by the graph output's name

  tools/make_padded_onnx.py --out tests/data/onnx-padded   (tools/make_golden_data.sh runs it)
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_torch import export_onnx, write_safetensors  # noqa: E402


class PaddedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.same4 = nn.Conv2d(3, 8, 4)                      # after F.pad 1 before, 2 after: 'same'
        self.tf_same = nn.Conv2d(8, 16, 3, stride=2)         # after F.pad 0 before, 1 after: 16 -> 8
        self.dw = nn.Conv2d(16, 16, 3, groups=16)            # after F.pad 2 above, 0 below, 1 left, 1 right
        self.fc = nn.Linear(16, 10)

    def forward(self, x, taps):
        x = taps["same4"] = F.relu(self.same4(F.pad(x, (1, 2, 1, 2))))
        x = taps["tf_same"] = F.relu(self.tf_same(F.pad(x, (0, 1, 0, 1))))
        x = taps["dw"] = F.relu(self.dw(F.pad(x, (1, 1, 2, 0))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=2024)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    model = PaddedNet().eval()
    x = torch.randn(2, 3, 16, 16)
    taps = {}
    with torch.no_grad():
        logits = model(x, taps)
    os.makedirs(a.out, exist_ok=True)
    names = list(taps)
    export_onnx(model, x[:1], names, os.path.join(a.out, "model.onnx"), 13)
    meta = {"torch": torch.__version__, "source": "tools/make_padded_onnx.py"}
    write_safetensors(os.path.join(a.out, "input.safetensors"), {"input": x}, meta)
    write_safetensors(os.path.join(a.out, "expect.safetensors"), {"output": logits, **taps}, meta)


if __name__ == "__main__":
    main()
