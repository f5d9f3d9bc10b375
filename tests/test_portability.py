"""The numerics contract's promise across machines: records made on another x86-64 CPU under the
contract (tests/reference/x86-portable, with the commands and the CPU that made them) are
recomputed here bit for bit, every field but the environment and the timing."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REFERENCE = Path(__file__).resolve().parent / "reference" / "x86-portable"
COMMANDS = [line.split("gaugelab ", 1)[1].split() for line in (REFERENCE / "README.md").read_text().splitlines()
            if line.startswith("gaugelab ")]
MACHINE_FIELDS = ("environment", "env", "wall_s", "digest")  # the digest covers the first three

pytestmark = [pytest.mark.slow, pytest.mark.portable]


def without_machine(record):
    return {k: v for k, v in record.items() if k not in MACHINE_FIELDS}


@pytest.mark.parametrize("args", COMMANDS, ids=[a[a.index("-o") + 1] for a in COMMANDS])
def test_reference_record_is_recomputed_bit_for_bit(args, tmp_path):
    name = args[args.index("-o") + 1]
    args = [*args[: args.index("-o") + 1], str(tmp_path / name), *args[args.index("-o") + 2:]]
    subprocess.run([sys.executable, "-m", "gaugelab.cli", *args], check=True, capture_output=True, text=True)
    ours, theirs = (json.loads(p.read_text()) for p in (tmp_path / name, REFERENCE / name))
    assert ours["environment" if "environment" in ours else "env"]["numerics"] == "x86-portable"
    made_on = theirs.get("environment", theirs.get("env"))["cpu"]
    differ = [k for k in sorted(set(ours) | set(theirs)) if k not in MACHINE_FIELDS and ours.get(k) != theirs.get(k)]
    assert not differ, f"{name}: fields {differ} differ from the record made on {made_on}"
    assert without_machine(ours) == without_machine(theirs)


def test_the_reference_covers_both_engines():
    assert len(COMMANDS) >= 6 and {a[0] for a in COMMANDS} == {"sensing", "twins"}
