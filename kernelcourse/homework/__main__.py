"""``python -m kernelcourse.homework release``: write the student starters with nbgrader."""

from __future__ import annotations

import argparse
import sys

from .release import NbgraderMissing, release


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m kernelcourse.homework",
        description="Release homework: nbgrader generate_assignment on the solution notebooks.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rel = sub.add_parser("release", help="write the starters (solutions and hidden tests removed)")
    rel.add_argument("--source", default="book/homework/solutions", help="solution notebooks")
    rel.add_argument("--dest", default="book/homework", help="folder for the starters")
    rel.add_argument(
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
