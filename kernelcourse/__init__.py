"""kernelcourse: kernel methods at scale, the package behind the course book.

Modules (imports only point down this list): ``kernels``, ``rkhs``, ``spectral``, ``features``,
``ridge``, ``svm``, ``sgd``, ``bounds``, ``datasets``, ``plotting``, ``homework``.
"""

__version__ = "0.1.0"
