"""String kernels: explicit-map identity against a naive count, PSD, rules, SVM, bad input."""

from collections import Counter

import numpy as np
import pytest
from sklearn.svm import SVC

from kernelcourse.kernels import is_psd
from kernelcourse.strings import (
    Normalized,
    SpectrumKernel,
    WeightedDegreeKernel,
    _sparse_gram,
    normalize,
    planted_motif_sequences,
    string_exp,
    string_gram,
)
from kernelcourse.svm import KernelSVC

SEQS = ["ACGTACGT", "AAAA", "GATTACA", "CCGTA", "TTTTGA", "ACG"]


def naive_spectrum(x, y, k):
    cx = Counter(x[i : i + k] for i in range(len(x) - k + 1))
    cy = Counter(y[i : i + k] for i in range(len(y) - k + 1))
    return sum(cx[u] * cy[u] for u in cx)


def naive_wd(x, y, L):
    total = 0.0
    for d in range(1, L + 1):
        beta = 2 * (L - d + 1) / (L * (L + 1))
        total += beta * sum(x[i : i + d] == y[i : i + d] for i in range(len(x) - d + 1))
    return total


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_spectrum_matches_counting_and_feature_map(k):
    kern = SpectrumKernel(k)
    K = kern(SEQS)
    expected = np.array([[naive_spectrum(a, b, k) for b in SEQS] for a in SEQS])
    np.testing.assert_array_equal(K, expected)
    F = kern.feature_map(SEQS)
    assert F.shape == (len(SEQS), 4**k)
    np.testing.assert_array_equal((F @ F.T).toarray(), K)
    np.testing.assert_array_equal(kern.diag(SEQS), np.diag(K))
    assert is_psd(K)


def test_spectrum_cross_gram_and_kmers():
    kern = SpectrumKernel(2)
    K = kern(SEQS[:2], SEQS[2:])
    assert K.shape == (2, 4)
    assert K[0, 0] == naive_spectrum(SEQS[0], SEQS[2], 2)
    F = kern.feature_map(["GATTACA"])
    assert sorted(kern.kmers(F.indices)) == sorted({"GA", "AT", "TT", "TA", "AC", "CA"})


def test_weighted_degree_matches_definition():
    seqs, _ = planted_motif_sequences(6, length=20, random_state=1)
    kern = WeightedDegreeKernel(4)
    K = kern(seqs)
    expected = np.array([[naive_wd(a, b, 4) for b in seqs] for a in seqs])
    np.testing.assert_allclose(K, expected, rtol=1e-12)
    F = kern.feature_map(seqs)
    assert F.shape[1] == kern.feature_dim(20)
    np.testing.assert_allclose((F @ F.T).toarray(), K, rtol=1e-12)
    assert is_psd(K)


def test_weighted_degree_feature_dim_names_a_bad_length():
    # "4" failed with a bare "'<' not supported between instances of 'str' and 'int'"
    kern = WeightedDegreeKernel(4)
    assert kern.feature_dim(np.int64(2)) == kern.feature_dim(2) == 2 * 4 + 16
    assert kern.feature_dim(0) == 0
    for bad in ("4", 2.0, True):
        with pytest.raises(TypeError, match="length must be an integer"):
            kern.feature_dim(bad)
    with pytest.raises(ValueError, match="length must be an integer >= 0"):
        kern.feature_dim(-1)


def test_construction_rules_stay_psd_with_sparse_maps():
    seqs, _ = planted_motif_sequences(8, length=30, random_state=2)
    s, w = SpectrumKernel(3), WeightedDegreeKernel(3)
    for kern in (s + w, 2.0 * s, s * w, normalize(s), string_exp(normalize(s)), s + 1.0):
        assert is_psd(kern(seqs)), kern
    for kern in (s + w, 2.0 * s, s * w, normalize(s)):
        F = kern.feature_map(seqs)
        np.testing.assert_allclose((F @ F.T).toarray(), kern(seqs), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.diag(normalize(s)(seqs)), 1.0)


def test_product_feature_map_of_large_maps():
    # 4¹⁰ × 4¹⁰ columns: the int32 column indices wrapped around (scipy: "negative axis 1
    # index"), and 4²⁰ × 4²⁰ overflowed Python's conversion to a C long
    kern = SpectrumKernel(10) * SpectrumKernel(10)
    seqs, _ = planted_motif_sequences(3, length=30, random_state=0)
    F = kern.feature_map(seqs)
    assert F.shape == (6, 4**20) and F.indices.min() >= 0
    np.testing.assert_array_equal(_sparse_gram(F), kern(seqs))  # F Fᵀ on the used columns
    with pytest.raises(ValueError, match="beyond the int64 k-mer indices"):
        (SpectrumKernel(20) * SpectrumKernel(20)).feature_map(seqs)


def test_unknown_characters_policy():
    with pytest.raises(ValueError, match=r"characters \['N'\] outside the alphabet"):
        SpectrumKernel(2)(["ACGNT"])
    skip = SpectrumKernel(2, unknown="skip")
    np.testing.assert_array_equal(skip(["ACNGT"]), SpectrumKernel(2)(["ACGT"]) - 1)
    with pytest.raises(ValueError, match="unknown must be one of"):
        SpectrumKernel(2, unknown="ignore")


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: SpectrumKernel(0), ValueError, "k must be an integer >= 1"),
        (lambda: SpectrumKernel(2.5), TypeError, "k must be an integer"),
        (lambda: SpectrumKernel(True), TypeError, "k must be an integer"),
        (lambda: WeightedDegreeKernel(0), ValueError, "degree must be an integer >= 1"),
        (lambda: SpectrumKernel(2, alphabet=""), TypeError, "alphabet must be a non-empty"),
        (lambda: SpectrumKernel(2, alphabet="ACCA"), ValueError, "repeated symbols"),
        (lambda: SpectrumKernel(40, alphabet="ACGT"), ValueError, "do not fit 64-bit"),
        (lambda: SpectrumKernel(2)(["AC", ""]), ValueError, r"X\[1\] is the empty string"),
        (lambda: SpectrumKernel(2)([]), ValueError, "X is empty"),
        (lambda: SpectrumKernel(2)("ACGT"), TypeError, "got a single string"),
        (lambda: SpectrumKernel(2)(["AC", 3]), TypeError, r"X\[1\] must be a str"),
        (lambda: SpectrumKernel(2)(["AC"], [b"AC"]), TypeError, r"Y\[0\] must be a str"),
        (lambda: WeightedDegreeKernel(2)(["ACG", "AC"]), ValueError, "one length"),
        (lambda: normalize(SpectrumKernel(3))(["AC"]), ValueError, "K\\(x, x\\) = 0"),
        (lambda: Normalized(np.eye(2)), TypeError, "StringKernel"),
        (lambda: string_gram(np.eye(2), ["A"]), TypeError, "StringKernel"),
    ],
)
def test_bad_input_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_precomputed_svm_separates_planted_motifs():
    seqs, y = planted_motif_sequences(60, length=50, random_state=0)
    train, test = slice(0, 80), slice(80, None)
    kern = normalize(SpectrumKernel(4))
    svm = SVC(kernel="precomputed", C=10).fit(string_gram(kern, seqs[train]), y[train])
    acc = svm.score(string_gram(kern, seqs[test], seqs[train]), y[test])
    assert acc >= 0.9
    ours = KernelSVC(kernel="precomputed", C=10).fit(string_gram(kern, seqs[train]), y[train])
    assert ours.score(string_gram(kern, seqs[test], seqs[train]), y[test]) >= 0.9


def test_planted_motif_sequences_checks():
    seqs, y = planted_motif_sequences(5, length=30, random_state=3)
    assert len(seqs) == 10 and set(y) == {0, 1} and all(len(s) == 30 for s in seqs)
    with pytest.raises(ValueError, match="motif"):
        planted_motif_sequences(5, motifs=("ACGX", "ACGT"))
    with pytest.raises(ValueError, match="two strings"):
        planted_motif_sequences(5, motifs=("ACGT",))


@pytest.mark.parametrize("op", ["+", "*"])
def test_string_and_vector_kernels_do_not_combine(op):
    from kernelcourse.kernels import RBF
    from kernelcourse.strings import SpectrumKernel

    for a, b in [(SpectrumKernel(), RBF()), (RBF(), SpectrumKernel())]:
        with pytest.raises(TypeError, match="cannot form"):
            (a + b) if op == "+" else (a * b)


@pytest.mark.parametrize("k", [10**9, 2**62, 10**400])
def test_spectrum_kernel_refuses_a_huge_k_at_once(k):
    # |alphabet|^k was formed in full: k = 2**62 never returned
    with pytest.raises(ValueError, match="do not fit 64-bit"):
        SpectrumKernel(k)


@pytest.mark.parametrize("degree", [2**62, 10**400])
def test_weighted_degree_kernel_refuses_weights_beyond_memory(degree):
    # η was a Python list of `degree` floats: 2**62 never returned, 10**400 overflowed
    with pytest.raises(MemoryError, match="weights η for degree=.*lower degree"):
        WeightedDegreeKernel(degree)
    L = 4
    expected = [2.0 * (L - d + 1) / (L * (L + 1)) for d in range(1, L + 1)]
    np.testing.assert_array_equal(WeightedDegreeKernel(L).eta, expected)
