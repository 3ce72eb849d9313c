"""`pip install . --no-build-isolation`: builds the extension with CMake (the same build as
scripts/setup, with the Python module on) and installs the `transduce` package (python/transduce).

TRANSDUCE_CMAKE_BUILD_DIR=DIR builds in (or reuses) that CMake build directory instead of a fresh
one under pip's build folder."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(os.environ.get("TRANSDUCE_CMAKE_BUILD_DIR") or
                         Path(self.build_temp).resolve() / "cmake")
        if not (build_dir / "CMakeCache.txt").is_file():
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
                            "-DCMAKE_BUILD_TYPE=Release", "-DTRANSDUCE_TESTS=OFF",
                            "-DTRANSDUCE_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"],
                           check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_transduce"], check=True)
        built = sorted((build_dir / "python" / "transduce").glob("_transduce*.so"))
        if not built:
            sys.exit(f"setup.py: no _transduce module in {build_dir}/python/transduce")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)


setup(
    packages=["transduce"],
    package_dir={"": "python"},
    package_data={"transduce": ["py.typed", "__init__.pyi"]},
    ext_modules=[Extension("transduce._transduce", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own folders beside the CMake build's, not among its files.
    options={"build": {"build_base": "build/setuptools"}},
)
