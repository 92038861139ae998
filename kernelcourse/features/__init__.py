"""Explicit (approximate) feature maps as scikit-learn transformers.

One submodule per method; everything public is re-exported here, so
``from kernelcourse.features import RandomFourierFeatures`` works.
"""

from .fourier import RandomFourierFeatures, fourier_features
from .kitchen_sinks import ArcCosine, RandomKitchenSinks, fit_box_constrained

__all__: list[str] = [
    "RandomFourierFeatures",
    "fourier_features",
    "ArcCosine",
    "RandomKitchenSinks",
    "fit_box_constrained",
]
