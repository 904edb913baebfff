"""A PEP 517 build backend for the interloper package that needs only the standard library.

build_wheel configures and builds the extension module with CMake, then packs it with the
package's Python files into a wheel. The build tree is `build-wheel/` in the checkout, or the
one the environment variable INTERLOPER_BUILD_DIR names (an existing tree, reused as it is
configured). Only wheels are built: an sdist of a C++ project is its checkout.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import subprocess
import sys
import sysconfig
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "interloper"


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _tag() -> str:
    python = "cp" + sysconfig.get_config_var("py_version_nodot")
    abi = python  # no stable ABI: the module is built for this interpreter
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{abi}-{platform}"


def _build_module() -> pathlib.Path:
    given = os.environ.get("INTERLOPER_BUILD_DIR")
    build = pathlib.Path(given) if given else ROOT / "build-wheel"
    if not given:
        subprocess.run(
            ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
             f"-DIL_PYTHON_EXECUTABLE={sys.executable}", "-DIL_BUILD_PYTHON=ON",
             "-DIL_BUILD_TESTS=OFF", "-DIL_BUILD_BENCH=OFF", "-DIL_BUILD_EXAMPLES=OFF"],
            check=True, stdout=sys.stderr)
    jobs = str(os.cpu_count() or 1)
    subprocess.run(["cmake", "--build", str(build), "--target", "_core", "-j", jobs],
                   check=True, stdout=sys.stderr)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build / "python" / "interloper" / f"_core{suffix}"
    if not module.is_file():
        raise RuntimeError(f"the build made no {module}: was it configured for {sys.executable}?")
    return module


def _metadata(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}"]
    return "\n".join(lines) + "\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    info = pathlib.Path(metadata_directory) / f"{project['name']}-{project['version']}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata(project))
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    name, version = project["name"], project["version"]
    files: dict[str, bytes] = {}
    for path in sorted(PACKAGE.iterdir()):
        if path.suffix in (".py", ".pyi") or path.name == "py.typed":
            files[f"interloper/{path.name}"] = path.read_bytes()
    module = _build_module()
    files[f"interloper/{module.name}"] = module.read_bytes()
    info = f"{name}-{version}.dist-info"
    files[f"{info}/METADATA"] = _metadata(project).encode()
    files[f"{info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: interloper_build\n"
                              f"Root-Is-Purelib: false\nTag: {_tag()}\n").encode()
    files[f"{info}/top_level.txt"] = b"interloper\n"
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{name}-{version}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)
    return wheel
