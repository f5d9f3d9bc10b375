"""Compare the records of two results trees: every results/**/*.json of either, field by field,
timing aside (gaugelab.core.sealed.TIMING: a record's ``wall_s``, a census row's ``seconds`` and the
``digest`` that covers them, in bundles per member too).
Other result files (tables, CSVs) are compared byte for byte. Exits 1 on any difference.

    python benchmarks/compare_records.py OLD_ROOT NEW_ROOT [--only results/runs/twins ...]

OLD_ROOT and NEW_ROOT are workflow directories (each holding results/). Records one tree has
and the other lacks are listed (e.g. a control's run the workflow now reads from the zoo's record).
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # this checkout's engine, installed or not

from gaugelab.core.sealed import TIMING, content  # noqa: E402


def files(root: Path, only: list[str]) -> dict[str, Path]:
    found = {}
    for path in (root / "results").rglob("*"):
        rel = str(path.relative_to(root))
        if path.is_file() and "set_aside" not in path.parts and (not only or any(rel.startswith(o) for o in only)):
            found[rel] = path
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--only", nargs="*", default=[], help="path prefixes to compare (e.g. results/runs/twins)")
    parser.add_argument("--records-only", action="store_true", help="compare the JSON records only")
    args = parser.parse_args()
    old, new = files(args.old, args.only), files(args.new, args.only)
    if args.records_only:
        old, new = ({k: v for k, v in d.items() if k.endswith(".json")} for d in (old, new))
    same_bytes = same_untimed = 0
    differ = []
    for rel in sorted(old.keys() & new.keys()):
        a, b = old[rel].read_bytes(), new[rel].read_bytes()
        if a == b:
            same_bytes += 1
        elif rel.endswith(".json") and content(json.loads(a), TIMING) == content(json.loads(b), TIMING):
            same_untimed += 1
        else:
            differ.append(rel)
    only_old, only_new = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    print(f"{len(old.keys() & new.keys())} files in both: {same_bytes} byte-identical, "
          f"{same_untimed} identical but for timing ({', '.join(sorted(TIMING))}), {len(differ)} differ")
    for label, paths in (("differ", differ), (f"only in {args.old}", only_old), (f"only in {args.new}", only_new)):
        if paths:
            print(f"{len(paths)} {label}:")
            for rel in paths[:50]:
                print(f"  {rel}")
            if len(paths) > 50:
                print(f"  ... and {len(paths) - 50} more")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
