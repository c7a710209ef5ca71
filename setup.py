"""The compiled event loop (``sim.des.compiled``): Cython builds four modules of
``sim.des``, and the build records what it built them from.

Everything else is in ``pyproject.toml``.  The extensions are optional: without a C
compiler the install goes on and the engine runs its ``.py`` modules, with the same
records.
"""

import importlib.util
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_spec = importlib.util.spec_from_file_location("compiled", "sim/des/compiled.py")
assert _spec is not None and _spec.loader is not None
compiled = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compiled)


def _source(module: str) -> str:
    twin = Path("sim/des") / f"{module}.pyx"
    return str(twin if twin.exists() else twin.with_suffix(".py"))


class RecordedBuild(build_ext):
    """Builds the modules, then records their sources and files beside them."""

    def run(self) -> None:
        directory = Path(self.get_ext_fullpath("sim.des.kernel")).parent
        compiled.remove_built(directory)
        super().run()
        compiled.write_record(directory)

    def copy_extensions_to_source(self) -> None:
        # The editable install builds elsewhere and copies the modules into the sources.
        compiled.remove_built(Path("sim/des"))
        super().copy_extensions_to_source()
        compiled.write_record(Path("sim/des"))


setup(
    ext_modules=cythonize(
        [
            Extension(f"sim.des.{module}", [_source(module)], optional=True)
            for module in compiled.MODULES
        ],
        compiler_directives={"language_level": 3, "annotation_typing": False},
    ),
    cmdclass={"build_ext": RecordedBuild},
)
