"""Explicit (approximate) feature maps as scikit-learn transformers.

One submodule per method; everything public is re-exported here, so
``from kernelcourse.features import RandomFourierFeatures`` works.
"""

from .binning import RandomBinningFeatures
from .fourier import RandomFourierFeatures, fourier_features
from .nystroem import Nystroem, RankDeficiencyWarning, ridge_leverage_scores

__all__: list[str] = [
    "Nystroem",
    "RandomBinningFeatures",
    "RandomFourierFeatures",
    "RankDeficiencyWarning",
    "fourier_features",
    "ridge_leverage_scores",
]
