import os

import matplotlib
import pytest
import sklearn
from hypothesis import settings

matplotlib.use("Agg")

# Property tests: deterministic in CI and under `make test` (which sets HYPOTHESIS_PROFILE),
# so that a rare draw cannot fail one run of the same commit and pass the next; a little more
# searching, with fresh draws, when pytest is run by hand.
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def pytest_addoption(parser):
    parser.addoption(
        "--book-html",
        default=None,
        help="built book (_build/html) to check in headless Chromium; `make book-test` sets it",
    )
    parser.addoption(
        "--book-pdf",
        default=None,
        help="the PDF (_build/html/kernelcourse.pdf) to read back; `make book-test` sets it",
    )


def pytest_collection_modifyitems(config, items):
    import pytest

    if config.getoption("--book-html"):
        return
    skip = pytest.mark.skip(reason="needs the built book: run `make book-test`")
    for item in items:
        if "book_html" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)


@pytest.fixture
def dispatch(monkeypatch):
    """scikit-learn's array-API dispatch, for the tests on array-api-strict and torch arrays."""
    pytest.importorskip("array_api_strict")
    # scikit-learn refuses array_api_dispatch unless scipy's own switch is set; nothing here
    # calls scipy on non-numpy arrays, so setting the variable is enough.
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    with sklearn.config_context(array_api_dispatch=True):
        yield
