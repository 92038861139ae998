"""Generate student starter notebooks from the instructor's solution notebooks.

The markers and cell metadata follow nbgrader, so a solution notebook can be copied into an
nbgrader ``source/`` folder unchanged:

* ``### BEGIN SOLUTION`` … ``### END SOLUTION`` in a code cell becomes ``# YOUR CODE HERE`` and
  ``raise NotImplementedError()`` (indented like the ``BEGIN`` line); a markdown answer cell becomes
  ``YOUR ANSWER HERE`` (the region only, when the cell has markers; the whole cell otherwise).
  A solution cell without markers is replaced whole, as nbgrader does.
* ``### BEGIN HIDDEN TESTS`` … ``### END HIDDEN TESTS`` is removed from test cells.
* Outputs and execution counts are cleared; nbgrader metadata (schema 3: ``grade``,
  ``solution``, ``locked``, ``grade_id``, ``points``) and cell ids are kept.

Starters are published in the book and checked by strict nbval. A starter has no outputs, so nbval
runs every cell without comparing output, and fails on any error except in cells tagged
``raises-exception``. The release adds that tag to exactly the cells that reach a stub: a cell with
a stub at top level, or a cell whose top-level code uses a function whose body holds a stub (or
calls such a function). A later cell that needs a value such a cell never assigns would fail with
``NameError`` instead, so :func:`release_notebook` rejects that layout and names the cell.
"""

from __future__ import annotations

import ast
import copy
import pathlib
import re

__all__ = [
    "SOLUTION_BEGIN",
    "SOLUTION_END",
    "HIDDEN_BEGIN",
    "HIDDEN_END",
    "CODE_STUB",
    "TEXT_STUB",
    "RAISES_TAG",
    "release_notebook",
    "release",
    "starter_name",
    "region_lines",
]

SOLUTION_BEGIN = "### BEGIN SOLUTION"
SOLUTION_END = "### END SOLUTION"
HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
TEXT_STUB = "YOUR ANSWER HERE"
RAISES_TAG = "raises-exception"
NBGRADER_KEYS = ("grade", "solution", "locked", "grade_id", "schema_version")


def starter_name(solution_path):
    """The starter's file name: the same as the solution's (they live in different folders)."""
    return pathlib.Path(solution_path).name


# -- regions ---------------------------------------------------------------------------------------
def _replace_regions(lines, begin, end, stub, where):
    """Replace each ``begin``…``end`` block of ``lines`` by ``stub`` (None: drop it)."""
    out, inside, indent, found = [], False, "", False
    for line in lines:
        stripped = line.strip()
        if stripped == begin:
            if inside:
                raise ValueError(f"{where}: '{begin}' inside another '{begin}' region.")
            inside, found = True, True
            indent = line[: len(line) - len(line.lstrip())]
            if stub is not None:
                out.extend(indent + s if s else s for s in stub.split("\n"))
        elif stripped == end:
            if not inside:
                raise ValueError(f"{where}: '{end}' without a matching '{begin}'.")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{where}: '{begin}' without a matching '{end}'.")
    return out, found


def _has_marker(source, *markers):
    return any(line.strip() in markers for line in source.splitlines())


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def _check_metadata(nb, where):
    seen = set()
    for index, cell in enumerate(nb["cells"]):
        meta = _nbgrader(cell)
        here = f"{where}, cell {index}"
        source = cell["source"]
        if _has_marker(source, SOLUTION_BEGIN, SOLUTION_END) and not meta.get("solution"):
            raise ValueError(f"{here} has a solution region but is not a solution cell.")
        if _has_marker(source, HIDDEN_BEGIN, HIDDEN_END) and not meta.get("grade"):
            raise ValueError(f"{here} has hidden tests but is not a graded cell.")
        if not meta:
            continue
        missing = [k for k in NBGRADER_KEYS if k not in meta]
        if missing:
            raise ValueError(f"{here}: nbgrader metadata lacks {missing}.")
        if meta["schema_version"] != 3:
            raise ValueError(f"{here}: nbgrader schema_version must be 3.")
        if not meta["grade_id"]:
            raise ValueError(f"{here}: grade_id is empty.")
        if (
            cell["cell_type"] == "markdown"
            and not meta.get("task")
            and bool(meta["grade"]) != bool(meta["solution"])
        ):
            raise ValueError(f"{here}: a graded markdown answer must be grade and solution both.")
        if meta["grade_id"] in seen:
            raise ValueError(f"{here}: grade_id {meta['grade_id']!r} is used twice.")
        seen.add(meta["grade_id"])
        if meta["grade"] and not meta.get("points", 0) > 0:
            raise ValueError(f"{here}: a graded cell needs points > 0.")


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


def _tag_raising_cells(nb, where):
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
def release_notebook(nb, where="notebook"):
    """Return the starter version of the solution notebook ``nb`` (a dict; not modified).

    Parameters
    ----------
    nb : dict
        A notebook in nbformat 4 JSON form (e.g. from ``json.load``).
    where : str
        Name used in error messages.

    Raises
    ------
    ValueError
        On unbalanced markers, markers in cells whose nbgrader metadata does not allow them,
        duplicate ``grade_id``\\ s, or a starter layout that would fail with ``NameError``.
    """
    _check_metadata(nb, where)
    out = copy.deepcopy(nb)
    for index, cell in enumerate(out["cells"]):
        here = f"{where}, cell {index}"
        lines = cell["source"].split("\n")
        meta = _nbgrader(cell)
        if meta.get("solution"):
            stub = CODE_STUB if cell["cell_type"] == "code" else TEXT_STUB
            lines, found = _replace_regions(lines, SOLUTION_BEGIN, SOLUTION_END, stub, here)
            if not found:  # nbgrader replaces an unmarked solution cell whole
                lines = stub.split("\n")
        if meta.get("grade"):
            lines, _ = _replace_regions(lines, HIDDEN_BEGIN, HIDDEN_END, None, here)
        cell["source"] = "\n".join(lines).rstrip("\n")
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    _tag_raising_cells(out, where)
    return out


def _read(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return nbformat.from_dict(nb)


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
    """
    import nbformat

    source, dest = pathlib.Path(source), pathlib.Path(dest)
    solutions = sorted(source.glob("*.ipynb"))
    if not solutions:
        raise FileNotFoundError(f"no solution notebooks (*.ipynb) in {source}")
    changed = []
    for path in solutions:
        nb = _read(path)
        starter = nbformat.from_dict(release_notebook(nb, where=str(path)))
        nbformat.validate(starter)
        text = nbformat.writes(starter) + "\n"
        target = dest / starter_name(path)
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if old != text:
            changed.append(target)
            if not check:
                dest.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    return changed


def region_lines(source):
    """Every line inside the solution and hidden-test regions of ``source``."""
    hidden, inside = [], False
    pattern = re.compile(r"^\s*###\s+(BEGIN|END)\s+(SOLUTION|HIDDEN TESTS)\s*$")
    for line in source.splitlines():
        match = pattern.match(line)
        if match:
            inside = match.group(1) == "BEGIN"
        elif inside:
            hidden.append(line)
    return hidden
