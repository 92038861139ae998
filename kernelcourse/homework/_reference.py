r"""Reference answers the self-checks compare against, where the package has no estimator yet.

Kernels, Gram matrices and the PSD test come from :mod:`kernelcourse.kernels`, random Fourier
features from :func:`kernelcourse.features.fourier_features`, Hoeffding's bound from
:mod:`kernelcourse.bounds`, the SVM dual solution from :class:`kernelcourse.svm.KernelSVC`. The
ridge solutions from :mod:`kernelcourse.ridge`. The small functions here state the remaining
lecture formulas directly (until the Nyström features land in the package) and are tested in
``tests/test_homework.py``.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__ = [
    "ridge_primal",
    "ridge_dual",
    "kernel_ridge_predict",
    "svm_dual_objective",
    "smo_step",
    "svm_dual_solution",
    "svm_intercept",
    "nystroem_features",
    "relative_spectral_error",
]


def ridge_primal(Phi, y, lam):
    r"""w = (λI_D + ΦᵀΦ)⁻¹Φᵀy, the ridge/MAP solution of lecture 001 (λ standing for λσ²):
    :class:`kernelcourse.ridge.RidgeRegression` without intercept."""
    from ..ridge import RidgeRegression

    return RidgeRegression(lam=lam, fit_intercept=False).fit(Phi, y).coef_


def ridge_dual(Phi, y, lam):
    r"""w = Φᵀ(λI_n + ΦΦᵀ)⁻¹y, the same vector by the push-through identity (lecture 001)."""
    from ..ridge import solve_regularized_psd

    return Phi.T @ solve_regularized_psd(Phi @ Phi.T, y, lam)


def kernel_ridge_predict(K, y, lam, K_test):
    r"""Predictions K_test α with α = (K + λI)⁻¹y (lectures 001, 002), solved by
    :func:`kernelcourse.ridge.solve_regularized_psd`."""
    from ..ridge import solve_regularized_psd

    return K_test @ solve_regularized_psd(K, y, lam)


def svm_dual_objective(alpha, K, y):
    r"""1ᵀα − ½ αᵀGα with G = (yyᵀ)∘K, the SVM dual of lecture 003."""
    v = alpha * y
    return float(alpha.sum() - 0.5 * v @ K @ v)


def smo_step(alpha, K, y, C, i, j):
    r"""Maximise the dual exactly over (α_i, α_j), keeping yᵀα and the box 0 ≤ α ≤ C.

    Moving α_i by y_i t and α_j by −y_j t keeps yᵀα fixed; along that line the objective is a
    parabola with curvature −η, η = K_ii + K_jj − 2K_ij, maximised at t = (y_i g_i − y_j g_j)/η
    with g = 1 − Gα; t is then clipped to the box.
    """
    alpha = np.array(alpha, dtype=float)
    g = 1.0 - y * (K @ (alpha * y))
    eta = max(K[i, i] + K[j, j] - 2.0 * K[i, j], 1e-12)
    t = (y[i] * g[i] - y[j] * g[j]) / eta
    # α_i + y_i t ∈ [0, C] and α_j − y_j t ∈ [0, C]
    lo_i, hi_i = sorted(((0 - alpha[i]) * y[i], (C - alpha[i]) * y[i]))
    lo_j, hi_j = sorted(((alpha[j] - 0) * y[j], (alpha[j] - C) * y[j]))
    t = min(max(t, max(lo_i, lo_j)), min(hi_i, hi_j))
    alpha[i] += y[i] * t
    alpha[j] -= y[j] * t
    return np.clip(alpha, 0.0, C)


def svm_dual_solution(K, y, C):
    """Dual solution (α, b) of :class:`kernelcourse.svm.KernelSVC` on a precomputed Gram
    matrix, labels in {−1, +1}, solved to a KKT gap of 1e-8."""
    from ..svm import KernelSVC

    svc = KernelSVC(kernel="precomputed", C=C, tol=1e-8).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha, float(svc.intercept_[0])


def svm_intercept(alpha, K, y, C, tol=1e-8):
    r"""b = average of y_i − Σ_j α_j y_j K_ij over the free support vectors 0 < α_i < C."""
    f = K @ (alpha * y)
    free = (alpha > tol * C) & (alpha < C * (1 - tol))
    if not free.any():
        raise ValueError("no free support vector: b is only bounded by the KKT conditions.")
    return float(np.mean(y[free] - f[free]))


def nystroem_features(K_nm, K_mm, r):
    r"""z(x) = D̂_r^{-1/2} V̂_rᵀ [k(x, x̂_j)]_j from the top r eigenpairs of K̂ (lecture 004)."""
    eigvals, eigvecs = linalg.eigh(K_mm)
    order = np.argsort(eigvals)[::-1][:r]
    return K_nm @ eigvecs[:, order] / np.sqrt(eigvals[order])


def relative_spectral_error(K, Z):
    r"""‖K − ZZᵀ‖₂ / ‖K‖₂ for a symmetric K."""
    return float(np.linalg.norm(K - Z @ Z.T, 2) / np.linalg.norm(K, 2))
