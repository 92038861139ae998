"""Release student starters from the solution notebooks with nbgrader's own ``generate_assignment``.

``python -m kernelcourse.book.homework_release`` (``make homework``) copies every solution
notebook of ``book/homework/solutions/`` into the ``source/`` folder of a temporary nbgrader
course and runs nbgrader's :class:`~nbgrader.converters.GenerateAssignment` on it. nbgrader's
preprocessors do all the work of a release: ``LockCells`` (``deletable``/``editable`` flags),
``ClearSolutions`` (``### BEGIN SOLUTION`` regions become ``# YOUR CODE HERE`` stubs, written
answers ``YOUR ANSWER HERE``), ``ClearOutput``, ``ClearHiddenTests`` (``### BEGIN HIDDEN TESTS``
regions are dropped), ``ComputeChecksums`` (so that ``nbgrader validate`` recognises an
unanswered cell) and ``CheckCellMetadata``. The released notebook is then copied to
``book/homework/``. The hidden tests that grade the students stay in the solution notebooks,
which are not part of the installed package.

One thing nbgrader does not do is added here. Starters are published in the book and run by
strict nbval, which fails on any error except in cells tagged ``raises-exception``; the release
adds that tag to exactly the cells that reach a stub: a cell with a stub at top level, or a cell
whose top-level code uses a function whose body holds a stub (or calls such a function). A later
cell that needs a value such a cell never assigns would fail with ``NameError`` instead, so the
release rejects that layout and names the cell. The tag is cell metadata outside nbgrader's
checksums, so it changes nothing for ``nbgrader validate`` or ``autograde``.

nbgrader is an optional dependency: ``pip install "kernelcourse[instructor]"``.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import shutil
import sys
import tempfile

__all__ = [
    "CODE_STUB",
    "TEXT_STUB",
    "RAISES_TAG",
    "NbgraderMissing",
    "generate_assignment",
    "tag_raising_cells",
    "release",
    "starter_name",
    "main",
]

CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
TEXT_STUB = "YOUR ANSWER HERE"
RAISES_TAG = "raises-exception"
COURSE_ID = "kernelcourse"


class NbgraderMissing(ImportError):
    """nbgrader, which releases the starters, is not installed."""


def _nbgrader_api(root, exchange=None, *, database=True):
    """An :class:`nbgrader.apps.NbGraderAPI` for the course folder ``root``.

    ``database=False`` is ``nbgrader generate_assignment --no-db``: nothing is written to a
    gradebook (a release for the book needs none).
    """
    try:
        from nbgrader.apps import NbGraderAPI
        from traitlets.config import Config
    except ImportError as err:
        raise NbgraderMissing(
            "releasing homework needs nbgrader: pip install 'kernelcourse[instructor]'"
        ) from err
    config = Config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.course_id = COURSE_ID
    if exchange is not None:
        config.Exchange.root = str(exchange)
    if not database:
        config.SaveCells.enabled = False
        config.GenerateAssignment.no_database = True
    return NbGraderAPI(config=config)


def starter_name(solution_path):
    """The starter's file name: the same as the solution's (they live in different folders)."""
    return pathlib.Path(solution_path).name


def assignment_id(solution_path):
    """The nbgrader assignment of a solution notebook: its file name without ``.ipynb``."""
    return pathlib.Path(solution_path).stem


# -- which starter cells reach a stub ------------------------------------------------------------
def _is_stub_raise(node):
    exc = getattr(node, "exc", None)
    if isinstance(exc, ast.Call):
        exc = exc.func
    return (
        isinstance(node, ast.Raise)
        and isinstance(exc, ast.Name)
        and exc.id == ("NotImplementedError")
    )


def _loads(nodes):
    """Names read by ``nodes``, not looking inside function or class bodies."""
    names = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _stores(tree):
    """Names bound at the top level of a cell (assignments, imports, defs, loop targets)."""
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        else:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


def tag_raising_cells(nb, where="notebook"):
    """Tag the code cells that raise the stub's NotImplementedError; reject NameError layouts."""
    stubbed = set()  # functions and classes whose call reaches a stub
    unassigned = {}  # name -> index of the raising cell that should have assigned it
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse(cell["source"])
        except SyntaxError as err:
            raise ValueError(f"{where}, cell {index} is not plain Python: {err}") from err
        raises = False
        for stmt in tree.body:
            is_def = isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            has_stub = any(_is_stub_raise(n) for n in ast.walk(stmt))
            if is_def:
                body_names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)} - {stmt.name}
                if has_stub or body_names & stubbed:
                    stubbed.add(stmt.name)
                else:
                    stubbed.discard(stmt.name)  # redefined without a stub
            elif has_stub or _loads([stmt]) & stubbed:
                raises = True
        stores = _stores(tree)
        missing = (_loads(tree.body) - stores) & unassigned.keys()
        if missing:
            name = sorted(missing)[0]
            raise ValueError(
                f"{where}, cell {index} reads {name!r}, which cell {unassigned[name]} never "
                "assigns in the starter because it stops at a NotImplementedError stub; compute "
                f"{name!r} in the cell that uses it."
            )
        for name in stores:
            if raises:
                unassigned[name] = index
            else:
                unassigned.pop(name, None)
        tags = [t for t in cell["metadata"].get("tags", []) if t != RAISES_TAG]
        if raises:
            tags.append(RAISES_TAG)
        if tags:
            cell["metadata"]["tags"] = tags
        else:
            cell["metadata"].pop("tags", None)


# -- release ------------------------------------------------------------------------------------
def generate_assignment(solution_path, course_root, *, exchange=None, database=False):
    """Run nbgrader's ``generate_assignment`` on one solution notebook in ``course_root``.

    The notebook is copied to ``source/<id>/<id>.ipynb`` (``<id>`` its file stem) and nbgrader
    writes ``release/<id>/<id>.ipynb``. With ``database=True`` the assignment and its cells are
    recorded in the gradebook ``course_root/gradebook.db`` (needed to autograde); nbgrader's
    gradebook runs the ``alembic`` command, so its environment's ``bin`` must be on ``PATH``.

    Returns
    -------
    pathlib.Path
        The released notebook, exactly as nbgrader wrote it.
    """
    solution_path = pathlib.Path(solution_path)
    course_root = pathlib.Path(course_root)
    name = assignment_id(solution_path)
    source = course_root / "source" / name
    source.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(solution_path, source / f"{name}.ipynb")
    api = _nbgrader_api(course_root, exchange, database=database)
    result = api.generate_assignment(name)
    if not result["success"]:
        raise RuntimeError(
            f"nbgrader generate_assignment failed on {solution_path}:\n"
            f"{result.get('error') or result.get('log')}"
        )
    return course_root / "release" / name / f"{name}.ipynb"


def starter_text(released_path, where):
    """The committed form of a released notebook: nbgrader's output, stub cells tagged."""
    import nbformat

    nb = nbformat.read(released_path, as_version=4)
    tag_raising_cells(nb, where)
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def release(source="book/homework/solutions", dest="book/homework", *, check=False):
    """Write a starter into ``dest`` for every ``*.ipynb`` solution notebook in ``source``.

    Parameters
    ----------
    source, dest : path
        Folder of solution notebooks, folder for the starters.
    check : bool
        Write nothing; only report which starters differ from a fresh release.

    Returns
    -------
    list of pathlib.Path
        The starters written (``check=False``) or the ones that are out of date (``check=True``).

    Raises
    ------
    NbgraderMissing
        When nbgrader is not installed.
    """
    source, dest = pathlib.Path(source), pathlib.Path(dest)
    solutions = sorted(source.glob("*.ipynb"))
    if not solutions:
        raise FileNotFoundError(f"no solution notebooks (*.ipynb) in {source}")
    changed = []
    with tempfile.TemporaryDirectory(prefix="kernelcourse-release-") as tmp:
        for path in solutions:
            released = generate_assignment(path, pathlib.Path(tmp) / "course")
            text = starter_text(released, where=str(path))
            target = dest / starter_name(path)
            old = target.read_text(encoding="utf-8") if target.exists() else None
            if old != text:
                changed.append(target)
                if not check:
                    dest.mkdir(parents=True, exist_ok=True)
                    target.write_text(text, encoding="utf-8")
    return changed


def main(argv=None):
    """``python -m kernelcourse.book.homework_release [--check]``: write the starters."""
    parser = argparse.ArgumentParser(
        prog="python -m kernelcourse.book.homework_release",
        description="Release homework: nbgrader generate_assignment on the solution notebooks.",
    )
    parser.add_argument("--source", default="book/homework/solutions", help="solution notebooks")
    parser.add_argument("--dest", default="book/homework", help="folder for the starters")
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit with status 1 if a starter differs from a fresh release",
    )
    args = parser.parse_args(argv)
    try:
        changed = release(args.source, args.dest, check=args.check)
    except NbgraderMissing as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    verb = "out of date" if args.check else "written"
    for path in changed:
        print(f"{verb}: {path}")
    if not changed:
        print("starters are up to date")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
