"""`pip install .` into a fresh virtual environment (Debian's pip, no network), then `import
transduce` there, away from the source tree, translates as the build's module does."""

import os
import subprocess
import sys
import venv
from pathlib import Path

from conftest import REPO


def test_pip_install_into_a_virtual_environment(model, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    build_dir = os.environ.get("TRANSDUCE_CMAKE_BUILD_DIR", str(REPO / "build"))
    env = dict(os.environ, TRANSDUCE_CMAKE_BUILD_DIR=build_dir, PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    # The venv has no pip of its own (no network to fetch one): the system's pip installs into it.
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                        "--no-build-isolation", str(REPO)], capture_output=True, text=True,
                       env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    code = ("import sys, transduce; t = transduce.Translator(sys.argv[1]);"
            "print(transduce.__file__); print(t.translate(['A dog runs.'], beam=2)[0].text)")
    r = subprocess.run([str(python), "-c", code, str(model / "model")], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    installed, text = r.stdout.splitlines()
    assert Path(installed).is_relative_to(env_dir), installed
    import transduce
    assert text == transduce.Translator(str(model / "model")).translate(["A dog runs."],
                                                                        beam=2)[0].text
