"""ctest runs these; a skip counts as a failure."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "recipes" / "common"))
from pytest_support import (  # noqa: E402,F401
    pytest_make_collect_report, pytest_runtest_makereport)
