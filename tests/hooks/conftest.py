from __future__ import annotations

import pytest


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "demo-app"
    folder.mkdir()
    return folder
