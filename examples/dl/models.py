"""The trainer's models: torchvision's ResNet-18, ResNet-50 and VGG-16 with random weights (nothing
is downloaded) and a small CNN that trains in milliseconds on a CPU (the tests' model)."""
import torch
from torch import nn

MODEL_NAMES = ("small", "resnet18", "resnet50", "vgg16")


class SmallCnn(nn.Module):
    """Two convolutions (the first with batch norm, so the model has buffers as well as
    parameters), global average pooling and a linear classifier."""

    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(32, classes)

    def forward(self, images):
        return self.classifier(torch.flatten(self.features(images), 1))


def build_model(name):
    """Returns (model, number of classes)."""
    if name == "small":
        return SmallCnn(10), 10
    import torchvision.models
    constructors = {"resnet18": torchvision.models.resnet18, "resnet50": torchvision.models.resnet50,
                    "vgg16": torchvision.models.vgg16}
    if name not in constructors:
        raise ValueError(f"unknown model {name!r}; one of {', '.join(MODEL_NAMES)}")
    return constructors[name](weights=None), 1000


def default_image_size(name):
    return 32 if name == "small" else 224
