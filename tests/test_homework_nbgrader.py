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

from kernelcourse.book.homework_release import COURSE_ID, _nbgrader_api, generate_assignment  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "book" / "homework" / "solutions"
STARTERS = ROOT / "book" / "homework"
# No data to load: the quickest to execute three times each. For each, a deliberately wrong
# answer to one question (the solution cell's replacement) and the points that question loses.
WRONG_ANSWER = {
    "hw1_psd_kernels": (
        "q1-witness",
        "def psd_witness(K, tol=1e-10):\n    return None  # never looks for a negative direction",
        2.0,
    ),
    "hw8_rkhs_offset_and_power_function": (
        "q1-offset",
        "def krr_with_offset(K, y, lam):\n"
        "    b = float(np.mean(y))  # centring y is not the unpenalised offset\n"
        "    return np.linalg.solve(K + lam * np.eye(len(y)), y - b), b",
        3.0,
    ),
}
ROUND_TRIPS = sorted(WRONG_ANSWER)
STUDENTS = ("correct", "empty", "one-wrong")


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


def _fill_in(starter_path, solution_path, out_path, replace=None):
    """The starter with every solution cell answered as in the solution notebook, except the
    cells named in ``replace`` (grade id -> source), answered with that source instead."""
    starter = json.loads(starter_path.read_text(encoding="utf-8"))
    solution = json.loads(solution_path.read_text(encoding="utf-8"))
    answers = {
        c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"])
        for c in solution["cells"]
        if c["metadata"].get("nbgrader", {}).get("solution")
    }
    answers.update(replace or {})
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


def _student(config, student_id, home, assignment):
    coursedir = CourseDirectory(config=config)
    coursedir.student_id = student_id
    coursedir.assignment_id = assignment
    student_config = Config(config)
    student_config.Exchange.assignment_dir = str(home)
    return coursedir, student_config


@pytest.mark.parametrize("assignment", ROUND_TRIPS)
def test_nbgrader_round_trip_scores_correct_empty_and_partly_wrong_submissions(
    assignment, tmp_path, kernel_env
):
    """generate → release → fetch → submit → collect → autograde: the solution scores full
    marks, the untouched starter zero, one wrong answer loses exactly that question's points.
    The points come from the hidden tests, which only the instructor's notebook holds."""
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir()
    solution = SOLUTIONS / f"{assignment}.ipynb"
    timings = {}
    start = time.perf_counter()
    released = generate_assignment(solution, course, exchange=exchange, database=True)
    timings["generate_assignment"] = time.perf_counter() - start
    assert "HIDDEN TESTS" not in released.read_text(encoding="utf-8")
    api = _nbgrader_api(course, exchange)
    assert api.release_assignment(assignment)["success"]

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = COURSE_ID
    config.Exchange.root = str(exchange)
    config.Exchange.cache = str(tmp_path / "cache")
    grade_id, wrong_source, lost = WRONG_ANSWER[assignment]
    start = time.perf_counter()
    for student in STUDENTS:
        home = tmp_path / "students" / student
        home.mkdir(parents=True)
        coursedir, student_config = _student(config, student, home, assignment)
        auth = Authenticator(config=student_config)
        ExchangeFetchAssignment(
            coursedir=coursedir, authenticator=auth, config=student_config
        ).start()
        fetched = home / assignment / f"{assignment}.ipynb"
        assert "HIDDEN TESTS" not in fetched.read_text(encoding="utf-8")
        if student == "correct":
            _fill_in(fetched, solution, fetched)
        elif student == "one-wrong":
            _fill_in(fetched, solution, fetched, replace={grade_id: wrong_source})
        ExchangeSubmit(coursedir=coursedir, authenticator=auth, config=student_config).start()
    timings["fetch + submit"] = time.perf_counter() - start

    assert api.collect(assignment)["success"]
    for student in STUDENTS:
        start = time.perf_counter()
        result = api.autograde(assignment, student)
        assert result["success"], result.get("log")
        timings[f"autograde {student}"] = time.perf_counter() - start

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE_ID) as gb:
        correct = gb.find_submission(assignment, "correct")
        empty = gb.find_submission(assignment, "empty")
        wrong = gb.find_submission(assignment, "one-wrong")
        max_code = correct.max_code_score
        assert max_code > lost > 0
        assert correct.code_score == pytest.approx(max_code)
        assert empty.code_score == pytest.approx(0.0)
        assert wrong.code_score == pytest.approx(max_code - lost)
        # written answers wait for a person; left unanswered they are scored 0 at once
        assert correct.needs_manual_grade and correct.written_score == pytest.approx(0.0)
        assert empty.written_score == pytest.approx(0.0)
    print(
        f"nbgrader round trip {assignment}:",
        ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()),
    )
