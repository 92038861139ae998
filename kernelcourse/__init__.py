"""kernelcourse: kernel methods at scale, the package behind the course book.

Modules (imports only point down this list): ``kernels``, ``devices``, ``rkhs``, ``spectral``,
``features``, ``ridge``, ``svm``, ``sgd``, ``bounds``, ``datasets``, ``plotting``, ``homework``,
``distributed``.
"""

__version__ = "0.1.0"
