"""kernelcourse: kernel methods at scale, the package behind the course book.

The library
    ``kernels``
        Kernel functions as small objects with their algebra; Gram matrices, PSD checks.
    ``strings``
        Kernels on sequences (spectrum and its relatives), and the planted-motif sequences of
        the string chapter (``planted_motif_sequences``).
    ``rkhs``
        Functions of a reproducing kernel Hilbert space; Mercer expansions.
    ``spectral``
        Bochner: spectral measures of shift-invariant kernels and their samplers.
    ``features``
        Explicit feature maps as scikit-learn transformers: random Fourier features,
        Nyström, random binning, random kitchen sinks.
    ``ridge``
        Ridge regression in the primal, kernel ridge regression in the dual, ridge on features.
    ``solvers``
        The one solver core: block conjugate gradient for several right-hand sides, the
        FALKON preconditioner, a Cholesky factorisation with jitter.
    ``scale``
        Nyström kernel ridge regression by FALKON, streaming ridge, out-of-core pieces.
    ``devices``, ``distributed``
        The same computations on array-API inputs (PyTorch, GPUs) and on a Dask cluster.
    ``svm``
        Support vector machines: the dual by SMO and the primal on explicit features.
    ``sgd``
        Six ways to train a kernel machine by stochastic gradient, with operation counts.
    ``bounds``
        Concentration and generalization bounds used to choose D and λ.
    ``datasets``
        Loaders for Adult, Covertype and MNIST (local folder, cache, or a checked download)
        and for the stored benchmark records; no synthetic data (those are generated where
        they are used, e.g. ``strings.planted_motif_sequences``).

The course
    ``homework``
        Self-checks students call from the homework notebooks.
    ``book``
        The book's own machinery (figure style, tables and prose, notebook execution); not
        needed by the library and never imported by it.

Imports point one way: ``book`` and ``homework`` use the library, the library never imports
them, and ``import kernelcourse`` imports no submodule at all.
"""

__version__ = "0.1.0"

__all__ = [
    "bounds",
    "datasets",
    "devices",
    "distributed",
    "features",
    "kernels",
    "ridge",
    "rkhs",
    "scale",
    "sgd",
    "solvers",
    "spectral",
    "strings",
    "svm",
]
