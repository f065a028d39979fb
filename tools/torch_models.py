"""The PyTorch twins of convlab's reference networks (models/*.cpp).

Module names, and so state_dict() names, are exactly those the C++ builders ask for, so a state_dict
trained on one of these modules loads into convlab unchanged. Each forward() can record the output
of every convlab layer into `taps`, keyed by convlab's layer name: a conv layer's output is taken
after its BatchNorm and activation, because convlab folds BatchNorm into the conv and fuses the
activation into the conv's epilogue.

resnet18 and mobilenet-v2 are torchvision's own classes (tools/torchvision_twins.py: their forward()
written out with taps, checked against torchvision's by export_torch.py), FP32 only.

The four lab modules are PyTorch eager-mode quantisable (export_torch.py --quantize int8): activations
are modules (fusable), the input and output pass QuantStub / DeQuantStub (identities until
converted) and a residual add is a FloatFunctional named `add_relu`, as in torchvision's quantizable
ResNet. None of these holds a parameter, so the FP32 state_dict is unchanged. `fusion` lists the
module groups torch.ao.quantization.fuse_modules folds (conv + BatchNorm [+ ReLU]; a ReLU6 is not
fusable and stays a quantised ReLU6, which keeps the conv's output quantisation).
"""
import math
import sys

import torch
from torch import nn
import torch.nn.functional as F
from torch.ao.quantization import DeQuantStub, QuantStub


def _tap(taps, name, x):
    if taps is not None:
        taps[name] = x.detach().dequantize() if x.is_quantized else x.detach().clone()
    return x


class _Stubs(nn.Module):
    """The quantisation boundary: the input is quantised by `quant`, the logits dequantised."""

    def __init__(self):
        super().__init__()
        self.quant = QuantStub()
        self.dequant = DeQuantStub()


class LabCnn(_Stubs):
    input_shape = (3, 32, 32)
    fusion = [["conv1", "relu1"], ["conv2", "relu2"], ["conv3", "relu3"]]

    def __init__(self):
        super().__init__()
        self.conv1, self.relu1 = nn.Conv2d(3, 16, 3, padding=1), nn.ReLU()
        self.conv2, self.relu2 = nn.Conv2d(16, 32, 3, padding=1), nn.ReLU()
        self.conv3, self.relu3 = nn.Conv2d(32, 64, 3, padding=1), nn.ReLU()
        self.fc = nn.Linear(64, 10)

    def forward(self, x, taps=None):
        x = _tap(taps, "conv1", self.relu1(self.conv1(self.quant(x))))
        x = _tap(taps, "pool1", F.max_pool2d(x, 2))
        x = _tap(taps, "conv2", self.relu2(self.conv2(x)))
        x = _tap(taps, "pool2", F.max_pool2d(x, 2))
        x = _tap(taps, "conv3", self.relu3(self.conv3(x)))
        x = _tap(taps, "gap", F.adaptive_avg_pool2d(x, 1))
        return self.dequant(_tap(taps, "fc", self.fc(torch.flatten(x, 1))))


class LeNet5(_Stubs):
    input_shape = (1, 28, 28)
    fusion = [["conv1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"], ["fc2", "relu4"]]

    def __init__(self):
        super().__init__()
        self.conv1, self.relu1 = nn.Conv2d(1, 6, 5, padding=2), nn.ReLU()
        self.conv2, self.relu2 = nn.Conv2d(6, 16, 5), nn.ReLU()
        self.fc1, self.relu3 = nn.Linear(400, 120), nn.ReLU()
        self.fc2, self.relu4 = nn.Linear(120, 84), nn.ReLU()
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x, taps=None):
        x = _tap(taps, "conv1", self.relu1(self.conv1(self.quant(x))))
        x = _tap(taps, "pool1", F.max_pool2d(x, 2))
        x = _tap(taps, "conv2", self.relu2(self.conv2(x)))
        x = _tap(taps, "pool2", F.max_pool2d(x, 2))
        x = _tap(taps, "fc1", self.relu3(self.fc1(torch.flatten(x, 1))))
        x = _tap(taps, "fc2", self.relu4(self.fc2(x)))
        return self.dequant(_tap(taps, "fc3", self.fc3(x)))


class BasicBlock(nn.Module):
    """torchvision's BasicBlock (expansion 1)."""

    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = None
        if stride != 1 or in_channels != out_channels:
            self.downsample = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride, bias=False),
                                            nn.BatchNorm2d(out_channels))
        self.add_relu = torch.ao.nn.quantized.FloatFunctional()

    def fusion(self, name):
        groups = [[f"{name}.conv1", f"{name}.bn1", f"{name}.relu"], [f"{name}.conv2", f"{name}.bn2"]]
        return groups + ([[f"{name}.downsample.0", f"{name}.downsample.1"]] if self.downsample is not None else [])

    def forward(self, x, name, taps=None):
        y = _tap(taps, name + ".conv1", self.relu(self.bn1(self.conv1(x))))
        y = _tap(taps, name + ".conv2", self.bn2(self.conv2(y)))
        if self.downsample is not None:
            x = _tap(taps, name + ".downsample.0", self.downsample(x))
        return _tap(taps, name, self.add_relu.add_relu(y, x))


class ResNet8(_Stubs):
    input_shape = (3, 32, 32)

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.layer1 = nn.Sequential(BasicBlock(16, 16, 1))
        self.layer2 = nn.Sequential(BasicBlock(16, 32, 2))
        self.layer3 = nn.Sequential(BasicBlock(32, 64, 2))
        self.fc = nn.Linear(64, 10)

    @property
    def fusion(self):
        blocks = (getattr(self, name)[0].fusion(name + ".0") for name in ("layer1", "layer2", "layer3"))
        return [["conv1", "bn1", "relu"]] + [g for b in blocks for g in b]

    def forward(self, x, taps=None):
        x = _tap(taps, "conv1", self.relu(self.bn1(self.conv1(self.quant(x)))))
        for name in ("layer1", "layer2", "layer3"):
            x = getattr(self, name)[0](x, name + ".0", taps)
        x = _tap(taps, "avgpool", F.adaptive_avg_pool2d(x, 1))
        return self.dequant(_tap(taps, "fc", self.fc(torch.flatten(x, 1))))


class DepthwiseSeparable(nn.Module):
    def __init__(self, in_channels, out_channels, stride):
        super().__init__()
        self.dw = nn.Conv2d(in_channels, in_channels, 3, stride, 1, groups=in_channels, bias=False)
        self.dw_bn = nn.BatchNorm2d(in_channels)
        self.pw = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.pw_bn = nn.BatchNorm2d(out_channels)
        self.dw_relu6, self.pw_relu6 = nn.ReLU6(), nn.ReLU6()

    def forward(self, x, name, taps=None):
        x = _tap(taps, name + ".dw", self.dw_relu6(self.dw_bn(self.dw(x))))
        return _tap(taps, name + ".pw", self.pw_relu6(self.pw_bn(self.pw(x))))


class MobileNetTiny(_Stubs):
    input_shape = (3, 32, 32)
    blocks = ((16, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2), (128, 128, 1))

    def __init__(self):
        super().__init__()
        stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        self.features = nn.Sequential(stem, *(DepthwiseSeparable(*b) for b in self.blocks))
        self.classifier = nn.Linear(128, 10)

    @property
    def fusion(self):
        blocks = ([[f"features.{i}.dw", f"features.{i}.dw_bn"], [f"features.{i}.pw", f"features.{i}.pw_bn"]]
                  for i in range(1, len(self.features)))
        return [["features.0.0", "features.0.1"]] + [g for b in blocks for g in b]

    def forward(self, x, taps=None):
        x = _tap(taps, "features.0.0", self.features[0](self.quant(x)))
        for i in range(1, len(self.features)):
            x = self.features[i](x, f"features.{i}", taps)
        x = _tap(taps, "avgpool", F.adaptive_avg_pool2d(x, 1))
        return self.dequant(_tap(taps, "classifier", self.classifier(torch.flatten(x, 1))))


def _torchvision_twin(class_name):
    """The twin's constructor, importing torchvision (python3-torchvision) only when it is built."""
    def build():
        try:
            import torchvision_twins
        except ImportError as e:
            sys.exit(f"{class_name} is torchvision's architecture: install python3-torchvision ({e})")
        return getattr(torchvision_twins, class_name)()
    return build


# The lab's four networks (32x32, quantisable) and the two ImageNet-size ones (torchvision's, FP32).
LAB_MODELS = {"lab-cnn": LabCnn, "lenet5": LeNet5, "resnet8": ResNet8, "mobilenet-tiny": MobileNetTiny}
IMAGENET_MODELS = {"resnet18": _torchvision_twin("ResNet18"), "mobilenet-v2": _torchvision_twin("MobileNetV2")}
MODELS = {**LAB_MODELS, **IMAGENET_MODELS}


@torch.no_grad()
def init_reference_weights(model, seed):
    """Weights that make a demanding reference: He-normal conv/linear weights (std sqrt(2/fan_in))
    keep every layer's activations alive, where PyTorch's default init lets these small nets'
    logits hardly depend on the input; BatchNorm statistics far from the identity (mean != 0,
    var != 1) so that folding them is really tested."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            m.weight.normal_(0.0, math.sqrt(2.0 / fan_in), generator=g)
            if m.bias is not None:
                m.bias.uniform_(-1.0 / math.sqrt(fan_in), 1.0 / math.sqrt(fan_in), generator=g)
        elif isinstance(m, nn.BatchNorm2d):
            m.weight.uniform_(0.5, 1.5, generator=g)
            m.bias.uniform_(-0.5, 0.5, generator=g)
            m.running_mean.uniform_(-0.5, 0.5, generator=g)
            m.running_var.uniform_(0.5, 2.0, generator=g)
    return model
