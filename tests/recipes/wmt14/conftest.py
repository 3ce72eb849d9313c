"""ctest runs these with TRANSDUCE_BINARY and TRANSDUCE_DATA_DIR set; a skip counts as a failure."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))
from pytest_support import (  # noqa: E402,F401
    pytest_make_collect_report, pytest_runtest_makereport)
