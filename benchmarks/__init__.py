"""Speed comparisons of kernelcourse against scikit-learn / LIBSVM, printed as ratios.

Each ``bench_*.py`` module defines ``run(smoke=False)`` that returns a list of result dicts
(``name``, ``ours_s``, ``reference_s``, ``ratio`` = reference / ours, ``target``), measured in
one process so the two sides share the machine's state. ``python -m benchmarks`` runs them all;
``python -m benchmarks rff`` runs the modules whose name contains "rff". ``smoke=True`` runs
tiny sizes, which the test suite uses to keep the benchmarks working (not to time anything).
"""
