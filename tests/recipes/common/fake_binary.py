"""A stand-in for the transduce binary whose `--version` prints what a test gives it."""

import stat


def fake_binary(tmp_path, version_output, status=0):
    """TMP_PATH/transduce, a script that prints VERSION_OUTPUT (printf's escapes) and exits with
    STATUS."""
    path = tmp_path / "transduce"
    path.write_text(f"#!/bin/sh\nprintf '{version_output}'\nexit {status}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
