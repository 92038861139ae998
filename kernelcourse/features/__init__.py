"""Explicit (approximate) feature maps as scikit-learn transformers.

One submodule per method; everything public is re-exported here, so
``from kernelcourse.features import RandomFourierFeatures`` works.
"""

from .binning import RandomBinningFeatures
from .nystroem import Nystroem, RankDeficiencyWarning, ridge_leverage_scores

__all__: list[str] = [
    "Nystroem",
    "RandomBinningFeatures",
    "RankDeficiencyWarning",
    "ridge_leverage_scores",
]
