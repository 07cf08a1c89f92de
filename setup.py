"""Package discovery (the rest of the metadata is in pyproject.toml): every package under `mcpsim/`
and under `worlds/` (installed as `mcpsim_worlds`) is found, so a new subpackage cannot silently
miss a plain `pip install .`."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["mcpsim", "mcpsim.*"], exclude=["*.__pycache__"]),
        "mcpsim_worlds",
        *(f"mcpsim_worlds.{p}" for p in find_namespace_packages("worlds", exclude=["*.__pycache__", "__pycache__"])),
    ],
)
