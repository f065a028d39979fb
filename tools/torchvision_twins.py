"""The ImageNet-size twins: torchvision's resnet18() and mobilenet_v2() themselves (the same classes,
modules and state_dict), each forward() written out to record convlab's layers into `taps` as the
lab twins of tools/torch_models.py do. `torchvision_forward` is torchvision's own forward, which
export_torch.py checks the written-out one against on every export."""
import torch
import torch.nn.functional as F
import torchvision

from torch_models import _tap


class ResNet18(torchvision.models.ResNet):
    """torchvision's resnet18() itself (the same class, blocks and state_dict), its forward() written
    out to record convlab's layers. `torchvision_forward` is torchvision's own, which export_torch.py
    checks it against."""
    input_shape = (3, 224, 224)
    torchvision_forward = torchvision.models.ResNet.forward

    def __init__(self):
        super().__init__(torchvision.models.resnet.BasicBlock, [2, 2, 2, 2])

    def forward(self, x, taps=None):
        x = _tap(taps, "conv1", self.relu(self.bn1(self.conv1(x))))
        x = _tap(taps, "maxpool", self.maxpool(x))
        for stage in ("layer1", "layer2", "layer3", "layer4"):
            for i, block in enumerate(getattr(self, stage)):
                name = f"{stage}.{i}"
                y = _tap(taps, name + ".conv1", block.relu(block.bn1(block.conv1(x))))
                y = _tap(taps, name + ".conv2", block.bn2(block.conv2(y)))
                if block.downsample is not None:
                    x = _tap(taps, name + ".downsample.0", block.downsample(x))
                x = _tap(taps, name, block.relu(y + x))
        x = _tap(taps, "avgpool", self.avgpool(x))
        return _tap(taps, "fc", self.fc(torch.flatten(x, 1)))


class MobileNetV2(torchvision.models.MobileNetV2):
    """torchvision's mobilenet_v2() itself, its forward() written out to record convlab's layers:
    each Conv2dNormActivation of a block (conv.J.0, after its BatchNorm and ReLU6), the projection
    (conv.J, after its BatchNorm), and the residual add named after the block."""
    input_shape = (3, 224, 224)
    torchvision_forward = torchvision.models.MobileNetV2.forward

    def forward(self, x, taps=None):
        x = _tap(taps, "features.0.0", self.features[0](x))
        for i in range(1, len(self.features) - 1):
            block, name, y = self.features[i], f"features.{i}", x
            *activated, projection, bn = block.conv
            for j, m in enumerate(activated):
                y = _tap(taps, f"{name}.conv.{j}.0", m(y))
            y = _tap(taps, f"{name}.conv.{len(activated)}", bn(projection(y)))
            x = _tap(taps, name, x + y) if block.use_res_connect else y
        last = len(self.features) - 1
        x = _tap(taps, f"features.{last}.0", self.features[last](x))
        x = _tap(taps, "avgpool", F.adaptive_avg_pool2d(x, 1))
        return _tap(taps, "classifier.1", self.classifier(torch.flatten(x, 1)))
