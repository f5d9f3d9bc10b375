"""The char-LM corpus: checksum, encoding, split and the shared index table (attention.md §5.2)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gaugelab.attention import corpus
from gaugelab.attention import configs

ROOT = Path(__file__).resolve().parents[1]


def local_corpus() -> Path | None:
    """The project's copy: $GAUGELAB_TINYSHAKESPEARE, else shared/data/... beside a parent folder."""
    if os.environ.get("GAUGELAB_TINYSHAKESPEARE"):
        return Path(os.environ["GAUGELAB_TINYSHAKESPEARE"])
    for parent in ROOT.parents:
        candidate = parent / "shared" / "data" / "tinyshakespeare" / "input.txt"
        if candidate.exists():
            return candidate
    return None


SHARED = local_corpus()
needs_corpus = pytest.mark.skipif(SHARED is None,
                                  reason="no local tiny-Shakespeare copy (set GAUGELAB_TINYSHAKESPEARE)")


@pytest.fixture
def truncated(tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"First Citizen:\nBefore we proceed any further, hear me speak.\n")
    return path


def test_a_wrong_file_is_refused_naming_both_digests(truncated):
    with pytest.raises(corpus.CorpusError, match=rf"sha256 {corpus.sha256(truncated)}, expected {corpus.SHA256}"):
        corpus.verify(truncated)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(corpus.CorpusError, match="not found at .*nothing.txt"):
        corpus.verify(tmp_path / "nothing.txt")


def test_fetch_without_network_says_how_to_proceed_and_leaves_nothing(tmp_path):
    dest = tmp_path / "data" / "input.txt"
    with pytest.raises(corpus.CorpusError, match="could not download .*set data.tinyshakespeare.path"):
        corpus.fetch(dest, url="http://127.0.0.1:9/input.txt")
    assert list(dest.parent.iterdir()) == []


def test_fetch_of_a_wrong_local_copy_leaves_nothing(tmp_path, truncated):
    dest = tmp_path / "data" / "input.txt"
    with pytest.raises(corpus.CorpusError, match="is not the tiny-Shakespeare corpus"):
        corpus.fetch(dest, local=truncated)
    assert list(dest.parent.iterdir()) == []


def test_windows_shift_targets_by_one():
    ids = torch.arange(20)
    x, y = corpus.windows(ids, torch.tensor([0, 5]), context=4)
    assert x.tolist() == [[0, 1, 2, 3], [5, 6, 7, 8]]
    assert y.tolist() == [[1, 2, 3, 4], [6, 7, 8, 9]]


def test_index_table_draws_validation_after_the_full_training_table():
    train, val = corpus.index_table(1000, 500)
    g = torch.Generator().manual_seed(corpus.DATA_SEED)
    torch.randint(0, 1000 - configs.CONTEXT - 1, (corpus.TABLE_STEPS, corpus.BATCH), generator=g)
    assert torch.equal(val, torch.randint(0, 500 - configs.CONTEXT - 1, (corpus.VAL_WINDOWS,), generator=g))
    assert train.shape == (corpus.TABLE_STEPS, corpus.BATCH)


@needs_corpus
def test_the_corpus_encodes_to_the_spec_sizes(tmp_path):
    path = corpus.fetch(tmp_path / "input.txt", local=SHARED)
    data = corpus.load(path)
    assert len(data.vocab) == 65 and data.vocab == sorted(data.vocab)
    assert (len(data.train), len(data.val)) == (1_003_854, 111_540)
    x, y = data.batch(1)
    assert x.shape == y.shape == (corpus.BATCH, configs.CONTEXT)
    assert torch.equal(x, data.train[data.train_starts[0][:, None] + torch.arange(configs.CONTEXT)])


@pytest.mark.workflow
def test_the_workflow_stops_on_a_wrong_corpus_before_any_job(tmp_path, truncated):
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
         "--configfile", str(ROOT / "tests" / "config" / "smoke.yaml"), "--cores", "1",
         "--config", f'data={{"tinyshakespeare":{{"path":"{truncated}"}}}}'],
        capture_output=True, text=True)
    assert proc.returncode != 0
    assert "is not the tiny-Shakespeare corpus" in proc.stderr + proc.stdout
    assert not (tmp_path / "results").exists()
