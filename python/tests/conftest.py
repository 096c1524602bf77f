import json
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def spec_file(tmp_path):
    """The shop's spec as a JSON spec file."""
    import shop

    path = tmp_path / "shop.json"
    path.write_text(json.dumps(shop.SPEC))
    return str(path)


@pytest.fixture(scope="session")
def sparring_bin():
    """The `sparring` binary: $SPARRING_BIN, else the workspace's debug build
    (built here when missing)."""
    given = os.environ.get("SPARRING_BIN")
    if given:
        return given
    path = os.path.join(ROOT, "target", "debug", "sparring")
    if not os.path.exists(path):
        subprocess.run(["cargo", "build", "-p", "sparring-cli"], cwd=ROOT, check=True)
    return path
