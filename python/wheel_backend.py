# PEP 517 build backend for migscope-progress using only the standard library (installs offline).
"""Writes the py3-none-any wheel of the migscope_progress package (and an editable one).

pip's build isolation would download setuptools, which fails where no package index can be
reached; this backend needs nothing beyond Python itself. The version is the package's
__version__, the long description this folder's README.md.
"""
import base64
import hashlib
import os
import re
import zipfile

NAME = "migscope-progress"
PACKAGE = "migscope_progress"
HERE = os.path.dirname(os.path.abspath(__file__))


def _read(*path):
    with open(os.path.join(HERE, *path), encoding="utf-8") as f:
        return f.read()


def _wheel(wheel_directory, files):
    """Writes `files` ((name in the wheel, bytes)) and the .dist-info; returns the wheel's name."""
    version = re.search(r'^__version__ = "(.+)"$', _read(PACKAGE, "__init__.py"), re.M).group(1)
    dist_info = f"{PACKAGE}-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
                "Summary: Reports a training job's steps to migscope\nRequires-Python: >=3.8\n"
                "Description-Content-Type: text/markdown\n\n" + _read("README.md"))
    wheel = "Wheel-Version: 1.0\nGenerator: wheel_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = files + [(f"{dist_info}/METADATA", metadata.encode()), (f"{dist_info}/WHEEL", wheel.encode())]
    record = ""
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    files.append((f"{dist_info}/RECORD", (record + f"{dist_info}/RECORD,,\n").encode()))
    basename = f"{PACKAGE}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, basename), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return basename


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    sources = sorted(f for f in os.listdir(os.path.join(HERE, PACKAGE)) if f.endswith(".py"))
    return _wheel(wheel_directory,
                  [(f"{PACKAGE}/{f}", _read(PACKAGE, f).encode()) for f in sources])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """`pip install -e`: a .pth file that puts this folder on sys.path."""
    return _wheel(wheel_directory, [(f"{PACKAGE}.pth", (HERE + "\n").encode())])
