"""environment.yml (conda) and pyproject.toml name the same packages with the same bounds."""

import pathlib
import tomllib

import pytest
import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = pathlib.Path(__file__).resolve().parents[1]


# Extras the conda environment does not carry: PyTorch is large and users pick its build (CPU or
# CUDA) themselves; the array-API path works with whatever torch is installed. The bench extra
# (oneDAL, x86 only) is a peer the SVM benchmark times when present, not part of the course.
NOT_IN_CONDA_ENV = {"torch", "bench"}


def pyproject_packages(text):
    """{name: specifier} for the runtime dependencies, every extra the conda environment
    carries, and Python itself."""
    project = tomllib.loads(text)["project"]
    reqs = list(project["dependencies"])
    for name, extra in project.get("optional-dependencies", {}).items():
        if name not in NOT_IN_CONDA_ENV:
            reqs += extra
    packages = {"python": str(Requirement(f"python{project['requires-python']}").specifier)}
    for req in map(Requirement, reqs):
        packages[canonicalize_name(req.name)] = str(req.specifier)
    return packages


def conda_packages(text):
    """{name: specifier} of the conda dependencies, and the pip section's lines."""
    env = yaml.safe_load(text)
    packages, pip = {}, []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip += dep.get("pip", [])
            continue
        try:
            req = Requirement(dep)
        except InvalidRequirement as err:
            # conda also reads pip-style bounds; its own "name 1.2.*" forms cannot be compared.
            raise AssertionError(f"write '{dep}' as name>=x,<y, like pyproject.toml") from err
        packages[canonicalize_name(req.name)] = str(req.specifier)
    packages.pop("pip", None)  # the tool that installs the pip section, not a dependency
    return packages, pip


def _differences(ours, theirs):
    return {
        name: (ours.get(name), theirs.get(name))
        for name in sorted(set(ours) | set(theirs))
        if ours.get(name) != theirs.get(name)
    }


def test_environment_matches_pyproject():
    expected = pyproject_packages((ROOT / "pyproject.toml").read_text())
    conda, pip = conda_packages((ROOT / "environment.yml").read_text())
    assert _differences(expected, conda) == {}, "(pyproject.toml, environment.yml)"
    # The package itself comes from this checkout; its dependencies are all conda's above.
    assert pip == ["-e ."]


def test_environment_uses_conda_forge_and_names_itself():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["name"] == "kernelcourse"
    assert env["channels"] == ["conda-forge"]


def test_comparison_sees_a_drift():
    pyproject = '[project]\nrequires-python = ">=3.11"\ndependencies = ["numpy>=2.4"]\n'
    same = "dependencies:\n  - python>=3.11\n  - numpy>=2.4\n  - pip\n"
    older = "dependencies:\n  - python>=3.11\n  - numpy>=2.0\n"
    missing = "dependencies:\n  - python>=3.11\n"
    expected = pyproject_packages(pyproject)
    assert _differences(expected, conda_packages(same)[0]) == {}
    assert _differences(expected, conda_packages(older)[0]) == {"numpy": (">=2.4", ">=2.0")}
    assert _differences(expected, conda_packages(missing)[0]) == {"numpy": (">=2.4", None)}
    with pytest.raises(AssertionError, match="numpy 2.4"):
        conda_packages("dependencies:\n  - numpy 2.4.*\n")
