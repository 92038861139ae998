"""Re-execute the book's notebooks in place so their stored outputs are what the code computes.

``python -m kernelcourse.notebooks execute book`` (``make notebooks``) runs every notebook under
the folder top to bottom in a fresh kernel, then trims what changes from run to run without
meaning anything (execution timings, kernel versions), so that running it twice changes nothing
and diffs show only real changes. Needs the ``book`` extra (nbclient, nbformat, ipykernel).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

__all__ = ["find_notebooks", "is_homework_starter", "execute_notebook", "trim_metadata", "main"]

# The kernels render figures with Agg, as under strict nbval (tests/nbval_plugin.py), so the
# stored outputs do not depend on the caller's matplotlib backend.
KERNEL_ENV = {"MPLBACKEND": "Agg"}

# Kept notebook-level metadata; everything else (versions, widget state, ...) is dropped.
_KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def is_homework_starter(path):
    """Whether ``path`` is a released homework starter (``book/homework/*.ipynb``).

    Starters are written with cleared outputs by ``python -m kernelcourse.homework release`` from
    the solutions in ``book/homework/solutions/``; executing them in place would store outputs.
    """
    return pathlib.Path(path).parent.name == "homework"


def find_notebooks(root):
    """Every ``.ipynb`` below ``root`` (checkpoints, build folders and homework starters
    excluded), sorted."""
    root = pathlib.Path(root)
    if root.is_file():
        return [root]
    skip = {".ipynb_checkpoints", "_build", ".venv"}
    return sorted(
        p for p in root.rglob("*.ipynb") if not skip & set(p.parts) and not is_homework_starter(p)
    )


def trim_metadata(nb):
    """Drop volatile metadata in place: cell timings, kernel/version details, widget state.

    Adjacent outputs of one stream are also merged: how a cell's prints split into messages
    depends on when the kernel flushed, not on what the cell printed."""
    nb.metadata = {
        "kernelspec": dict(_KERNELSPEC),
        "language_info": {"name": "python"},
        **({"nbgrader": nb.metadata["nbgrader"]} if "nbgrader" in nb.metadata else {}),
    }
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
        cell.metadata.pop("scrolled", None)
        if cell.cell_type == "code":
            cell.outputs = _merge_adjacent_streams(cell.outputs)
    return nb


def _merge_adjacent_streams(outputs):
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (
            out.output_type == "stream"
            and prev is not None
            and prev.output_type == "stream"
            and prev.name == out.name
        ):
            prev.text += out.text
        else:
            merged.append(out)
    return merged


def execute_notebook(path, *, timeout=600, kernel_name="python3"):
    """Execute the notebook at ``path`` in place with a fresh kernel started in its folder."""
    try:
        import nbformat
        from nbclient import NotebookClient
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "executing notebooks needs the book extra: pip install 'kernelcourse[book]'"
        ) from err
    path = pathlib.Path(path)
    os.environ.update(KERNEL_ENV)  # inherited by the kernel process
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(path.parent.resolve())}},
    )
    client.execute()
    trim_metadata(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return nb


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kernelcourse.notebooks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("execute", help="re-execute notebooks in place")
    ex.add_argument("paths", nargs="+", help="notebooks or folders to search for notebooks")
    ex.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    notebooks = [nb for p in args.paths for nb in find_notebooks(p)]
    if not notebooks:
        parser.error(f"no notebooks found under {args.paths}")
    for nb_path in notebooks:
        start = time.perf_counter()
        print(f"executing {nb_path} ...", flush=True)
        execute_notebook(nb_path, timeout=args.timeout)
        print(f"  done in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
