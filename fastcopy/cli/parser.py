"""argparse's parser classes for the ``fastcopy`` command (:func:`fastcopy.cli.build_parser` makes the parser; a
plainly written command line is read without it: :func:`fastcopy.cli.plain_args`)."""

from __future__ import annotations

import argparse


class Formatter(argparse.HelpFormatter):
    """argparse's help formatter, reading the terminal's width when it first needs it. argparse makes a formatter
    for every option it adds (to check the option's metavar) and each reads the width, which imports ``shutil``
    (~2 ms, with ``bz2`` and ``lzma``); a command that prints no help never needs it. The width and help position
    are those of a ``HelpFormatter`` made when they are first read (argparse's own rule, the terminal's width)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None, **more):
        super().__init__(prog, indent_increment, max_help_position, 80 if width is None else width, **more)
        if width is None:
            self._help_position = max_help_position
            del self._width, self._max_help_position  # (read through __getattr__)

    def __getattr__(self, name: str):
        if name not in ("_width", "_max_help_position") or "_help_position" not in self.__dict__:
            raise AttributeError(name)
        sized = argparse.HelpFormatter(self._prog, self._indent_increment, self._help_position)
        self._width, self._max_help_position = sized._width, sized._max_help_position
        return self.__dict__[name]


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose help formatter is :class:`Formatter` unless told otherwise (its sub-parsers
    are of its class)."""

    def __init__(self, *args, formatter_class=Formatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)
