"""Build script: everything is declared in pyproject.toml but the optional compiled
walker (`fstsynth._walk`, C), which setuptools builds only from here. It is optional:
if it cannot be built (no C compiler, no Python headers), the package installs without
it and `fstsynth apply` uses the numpy walker (see `fstsynth.stream`)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("fstsynth._walk", ["fstsynth/_walk.c"], optional=True)])
