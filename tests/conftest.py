import os

import matplotlib
from hypothesis import settings

matplotlib.use("Agg")

# Property tests: deterministic in CI, a little more searching on a developer's machine.
settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
