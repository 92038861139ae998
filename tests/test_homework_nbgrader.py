"""nbgrader end to end on a temporary course: validate the starters, and the full round trip
generate_assignment → release_assignment → fetch → submit → collect → autograde."""

import json
import os
import pathlib
import shutil
import sys
import time

import pytest

nbgrader = pytest.importorskip("nbgrader")

from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.auth import Authenticator  # noqa: E402
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit  # noqa: E402
from nbgrader.validator import Validator  # noqa: E402
from traitlets.config import Config  # noqa: E402

from kernelcourse.homework.release import COURSE_ID, _nbgrader_api, generate_assignment  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "book" / "homework" / "solutions"
STARTERS = ROOT / "book" / "homework"
ROUND_TRIP = "hw1_psd_kernels"  # no data to load: the quickest to execute twice


@pytest.fixture
def kernel_env(monkeypatch):
    """Kernels started by nbgrader import this checkout, and its gradebook finds ``alembic``."""
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(pathlib.Path(sys.executable).parent), os.environ["PATH"]])
    )


def _graded(nb):
    return [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]


@pytest.mark.parametrize("name", ["hw1_psd_kernels", "hw3_random_fourier"])
def test_nbgrader_validate_flags_every_unanswered_cell(name, tmp_path, kernel_env):
    """`nbgrader validate` on an untouched starter fails every graded cell, written ones too."""
    shutil.copyfile(STARTERS / f"{name}.ipynb", tmp_path / f"{name}.ipynb")
    start = time.perf_counter()
    results = Validator().validate(str(tmp_path / f"{name}.ipynb"))
    print(f"nbgrader validate {name}: {time.perf_counter() - start:.1f} s")
    assert "changed" not in results and "type_changed" not in results
    nb = json.loads((STARTERS / f"{name}.ipynb").read_text(encoding="utf-8"))
    graded = {"".join(c["source"]).strip() for c in _graded(nb)}
    failed = {cell["source"] for cell in results.get("failed", [])}
    assert failed == graded
    assert any(c["cell_type"] == "markdown" for c in _graded(nb))


def _fill_in(starter_path, solution_path, out_path):
    """The starter with every solution cell answered as in the solution notebook."""
    starter = json.loads(starter_path.read_text(encoding="utf-8"))
    solution = json.loads(solution_path.read_text(encoding="utf-8"))
    answers = {
        c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
        for c in solution["cells"]
        if c["metadata"].get("nbgrader", {}).get("solution")
    }
    for cell in starter["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            lines = answers[meta["grade_id"]].splitlines()
            cell["source"] = "\n".join(
                line
                for line in lines
                if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
            )
    out_path.write_text(json.dumps(starter, indent=1), encoding="utf-8")


def _student(config, student_id, home):
    coursedir = CourseDirectory(config=config)
    coursedir.student_id = student_id
    coursedir.assignment_id = ROUND_TRIP
    student_config = Config(config)
    student_config.Exchange.assignment_dir = str(home)
    return coursedir, student_config


def test_nbgrader_round_trip_scores_a_correct_and_an_empty_submission(tmp_path, kernel_env):
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir()
    timings = {}
    start = time.perf_counter()
    generate_assignment(SOLUTIONS / f"{ROUND_TRIP}.ipynb", course, exchange=exchange, database=True)
    timings["generate_assignment"] = time.perf_counter() - start
    api = _nbgrader_api(course, exchange)
    start = time.perf_counter()
    assert api.release_assignment(ROUND_TRIP)["success"]
    timings["release_assignment"] = time.perf_counter() - start

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = COURSE_ID
    config.Exchange.root = str(exchange)
    config.Exchange.cache = str(tmp_path / "cache")
    start = time.perf_counter()
    for student in ("correct", "empty"):
        home = tmp_path / "students" / student
        home.mkdir(parents=True)
        coursedir, student_config = _student(config, student, home)
        auth = Authenticator(config=student_config)
        ExchangeFetchAssignment(
            coursedir=coursedir, authenticator=auth, config=student_config
        ).start()
        fetched = home / ROUND_TRIP / f"{ROUND_TRIP}.ipynb"
        if student == "correct":
            _fill_in(fetched, SOLUTIONS / f"{ROUND_TRIP}.ipynb", fetched)
        ExchangeSubmit(coursedir=coursedir, authenticator=auth, config=student_config).start()
    timings["fetch + submit (2 students)"] = time.perf_counter() - start

    start = time.perf_counter()
    assert api.collect(ROUND_TRIP)["success"]
    timings["collect"] = time.perf_counter() - start
    for student in ("correct", "empty"):
        start = time.perf_counter()
        result = api.autograde(ROUND_TRIP, student)
        assert result["success"], result.get("log")
        timings[f"autograde {student}"] = time.perf_counter() - start

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        correct = gb.find_submission(ROUND_TRIP, "correct")
        empty = gb.find_submission(ROUND_TRIP, "empty")
        max_code = correct.max_code_score
        assert max_code == pytest.approx(6.0)  # three code questions of 2 points
        assert correct.code_score == pytest.approx(max_code)
        assert empty.code_score == pytest.approx(0.0)
        # the written answer waits for a person; left unanswered it is scored 0 at once
        assert correct.needs_manual_grade and correct.written_score == pytest.approx(0.0)
        assert empty.written_score == pytest.approx(0.0)
    print("nbgrader round trip:", ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
