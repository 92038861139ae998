"""Explicit (approximate) feature maps as scikit-learn transformers.

One submodule per method; everything public is re-exported here, so
``from kernelcourse.features import RandomFourierFeatures`` works.
"""

from .nystroem import Nystroem, RankDeficiencyWarning, ridge_leverage_scores

__all__: list[str] = ["Nystroem", "RankDeficiencyWarning", "ridge_leverage_scores"]
