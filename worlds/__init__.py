"""The worlds that ship with mcpsim, installed as the package `mcpsim_worlds`.

Each world is a folder registered under the `mcpsim.worlds` entry-point group in
pyproject.toml; nothing here imports them, so adding a world never edits this file.
"""
