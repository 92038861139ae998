"""Explicit (approximate) feature maps as scikit-learn transformers.

One submodule per method; everything public is re-exported here, so
``from kernelcourse.features import RandomFourierFeatures`` works.
"""

from .binning import BinCodes, RandomBinningFeatures
from .fourier import RandomFourierFeatures, fourier_features
from .kitchen_sinks import ArcCosine, RandomKitchenSinks, fit_box_constrained
from .nystroem import Nystroem, RankDeficiencyWarning, ridge_leverage_scores

__all__: list[str] = [
    "ArcCosine",
    "BinCodes",
    "Nystroem",
    "RandomBinningFeatures",
    "RandomFourierFeatures",
    "RandomKitchenSinks",
    "RankDeficiencyWarning",
    "fit_box_constrained",
    "fourier_features",
    "ridge_leverage_scores",
]
