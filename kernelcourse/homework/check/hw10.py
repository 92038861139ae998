"""Self-checks for homework 10: the random-walk kernel on labelled graphs (lecture 002).

The checks test properties every correct random-walk kernel has: symmetry in its two graphs,
invariance under a renumbering of the vertices, its value at λ = 0, growth with λ, a PSD Gram
matrix, a clear error when λ is too large for the series to converge and none below that limit,
and the geometric convergence of the iteration. None stores an expected value or computes the
kernel itself.
"""

from __future__ import annotations

import numpy as np

from ._core import SelfCheck, close, fresh_rng

__all__ = ["q1", "q2", "random_graph"]

# Library routines that would compute a graph kernel in one call.
SOLVERS = ("grakel", "networkx")


def random_graph(rng, n, p=0.35, n_labels=2):
    """A random undirected labelled graph: symmetric 0/1 adjacency, no loops, integer labels."""
    upper = np.triu(rng.uniform(size=(n, n)) < p, 1).astype(float)
    return upper + upper.T, rng.integers(0, n_labels, size=n)


def _safe_lam(A1, A2, rng):
    rho = np.abs(np.linalg.eigvalsh(A1)).max() * np.abs(np.linalg.eigvalsh(A2)).max()
    return float(rng.uniform(0.1, 0.6)) / max(rho, 1.0)


def _no_matching_edges(rng):
    """G1 with every edge joining labels 0 and 1, G2 with every label 0: the product graph has
    vertices but no edge, so the kernel counts the pairs with equal labels for every λ."""
    l1 = rng.permutation(np.arange(8) % 2)
    A1 = np.triu((rng.uniform(size=(8, 8)) < 0.6) & (l1[:, None] != l1[None, :]), 1)
    A1 = (A1 + A1.T).astype(float)
    A2, _ = random_graph(rng, 7, p=0.5)
    return A1, l1, A2, np.zeros(7, dtype=int), _safe_lam(A1, A2, rng)


def q1(student_walk_kernel, *, seed=None):
    """Check ``walk_kernel(A1, labels1, A2, labels2, lam)``."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw10.q1", student_walk_kernel)

    @c.test(
        "symmetric in the two graphs and invariant under renumbering the vertices",
        "the kernel counts walks, which do not depend on how the vertices are numbered.",
    )
    def _():
        A1, l1 = random_graph(rng, 6)
        A2, l2 = random_graph(rng, 7)
        lam = _safe_lam(A1, A2, rng)
        k12 = float(c.fn(A1, l1, A2, l2, lam))
        k21 = float(c.fn(A2, l2, A1, l1, lam))
        perm = rng.permutation(6)
        kp = float(c.fn(A1[np.ix_(perm, perm)], l1[perm], A2, l2, lam))
        close(k21, k12, rtol=1e-8, what="k(G2, G1) against k(G1, G2)")
        close(kp, k12, rtol=1e-8, what="the kernel after renumbering G1")

    @c.test(
        "at λ = 0 it counts the pairs of vertices with equal labels",
        "at λ = 0 only the walks of length 0 are left.",
    )
    def _():
        A1, l1 = random_graph(rng, 5, n_labels=3)
        A2, l2 = random_graph(rng, 8, n_labels=3)
        got = float(c.fn(A1, l1, A2, l2, 0.0))
        close(got, float(np.sum(l1[:, None] == l2[None, :])), what="k at λ = 0")

    @c.test(
        "walks match labels at every step: λ adds nothing if no edges of G1 and G2 match",
        "every vertex (i, j) of the product graph has equal labels, not only those where a walk "
        "starts or ends: keep only those rows and columns of A1 ⊗ A2.",
    )
    def _():
        A1, l1, A2, l2, lam = _no_matching_edges(rng)
        got = float(c.fn(A1, l1, A2, l2, lam))
        close(got, float(np.sum(l1[:, None] == l2[None, :])), what="k with λ > 0")

    @c.test(
        "the Gram matrix of eight graphs is positive semidefinite",
        "a kernel gives PSD Gram matrices for any graphs and any λ where its series "
        "converges: a negative eigenvalue means your k is not the kernel of the question.",
    )
    def _():
        graphs = [random_graph(rng, int(rng.integers(4, 8))) for _ in range(8)]
        rho = max(np.abs(np.linalg.eigvalsh(A)).max() for A, _ in graphs)
        lam = 0.5 / max(rho, 1.0) ** 2
        G = np.array([[float(c.fn(A, la, B, lb, lam)) for B, lb in graphs] for A, la in graphs])
        smallest = np.linalg.eigvalsh((G + G.T) / 2).min()
        assert smallest >= -1e-8 * np.abs(G).max(), f"smallest eigenvalue {smallest:.3g} < 0"

    @c.test(
        "raises ValueError when λ is too large for the series to converge",
        "the geometric series of λA× converges only when λ times the spectral radius of the "
        "product graph's adjacency is below 1.",
    )
    def _():
        A = np.ones((4, 4)) - np.eye(4)
        labels = np.zeros(4, dtype=int)
        try:
            c.fn(A, labels, A, labels, 0.5)
        except ValueError:
            return
        raise AssertionError("no ValueError for λ = 0.5 on two complete graphs K4")

    @c.test(
        "no ValueError where the series converges although λρ(A1)ρ(A2) > 1",
        "ρ(A1)ρ(A2) only bounds ρ(A×) from above: the labels remove vertices and edges of the "
        "product graph, so compare λ with the spectral radius of A× itself.",
    )
    def _():
        # G1 = K4 with two labels, G2 = K4 with one: the product graph is K2 × K4 on the eight
        # pairs whose labels match, with spectral radius 3 against ρ(A1)ρ(A2) = 9
        A = np.ones((4, 4)) - np.eye(4)
        l1, l2 = rng.permutation([0, 0, 1, 1]), np.zeros(4, dtype=int)
        lam = float(rng.uniform(0.15, 0.3))
        try:
            got = float(c.fn(A, l1, A, l2, lam))
        except ValueError as err:
            raise AssertionError(
                f"ValueError at λ = {lam:.3f}, where the series converges"
            ) from err
        assert np.isfinite(got) and got > 8, (
            f"k = {got:.4g} at λ = {lam:.3f}: not above the number of pairs with equal labels"
        )

    c.finish()


def q2(student_walk_kernel_iterative, *, seed=None):
    """Check ``walk_kernel_iterative(A1, labels1, A2, labels2, lam, tol) -> (value, n_iter)``."""
    rng = fresh_rng(seed)
    c = SelfCheck("hw10.q2", student_walk_kernel_iterative)

    @c.test(
        "counts equal labels at λ = 0, is symmetric, ignores vertex order and grows with λ",
        "the kernel is the sum of the fixed point of x = 1 + λA×x; written as an n1 × n2 "
        "matrix, A×x needs two matrix products and the label mask.",
    )
    def _():
        A1, l1 = random_graph(rng, 9)
        A2, l2 = random_graph(rng, 11)
        lam = _safe_lam(A1, A2, rng)
        at_zero, _ = c.fn(A1, l1, A2, l2, 0.0, 1e-12)
        close(float(at_zero), float(np.sum(l1[:, None] == l2[None, :])), what="k at λ = 0")
        value, n_iter = c.fn(A1, l1, A2, l2, lam, 1e-12)
        assert int(n_iter) >= 1, "n_iter must count the iterations"
        swapped, _ = c.fn(A2, l2, A1, l1, lam, 1e-12)
        close(float(swapped), float(value), rtol=1e-8, what="k(G2, G1) against k(G1, G2)")
        perm = rng.permutation(9)
        renumbered, _ = c.fn(A1[np.ix_(perm, perm)], l1[perm], A2, l2, lam, 1e-12)
        close(float(renumbered), float(value), rtol=1e-8, what="the kernel after renumbering")
        larger, _ = c.fn(A1, l1, A2, l2, 1.5 * lam, 1e-12)
        assert float(larger) >= float(value), "a larger λ gave a smaller kernel"

    @c.test(
        "walks match labels at every step: λ adds nothing if no edges of G1 and G2 match",
        "every vertex a walk visits needs equal labels in both graphs: apply the label mask to "
        "the whole update, not only to the constant term.",
    )
    def _():
        A1, l1, A2, l2, lam = _no_matching_edges(rng)
        got, _ = c.fn(A1, l1, A2, l2, lam, 1e-12)
        close(float(got), float(np.sum(l1[:, None] == l2[None, :])), what="k with λ > 0")

    @c.test(
        "its iterations grow like log(1/tol) / log(1/(λρ)), not faster",
        "the error shrinks by the factor λρ(A×) per iteration: stop as soon as the change of "
        "X is below tol.",
    )
    def _():
        A1, l1 = random_graph(rng, 10)
        A2, l2 = random_graph(rng, 10)
        rho = np.abs(np.linalg.eigvalsh(A1)).max() * np.abs(np.linalg.eigvalsh(A2)).max()
        lam = 0.5 / max(rho, 1.0)
        _, n_iter = c.fn(A1, l1, A2, l2, lam, 1e-10)
        bound = np.log(1e-10 / (10 * 10)) / np.log(0.5) + 5
        assert int(n_iter) <= bound, f"{int(n_iter)} iterations, more than {bound:.0f}"

    c.finish()
