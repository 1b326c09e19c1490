"""The ``minimodel`` command: one subcommand per job.

Each subcommand lives in its own module and exposes ``add_arguments(parser)`` and
``run(args) -> int``; registering one is a line in ``SUBCOMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from minimodel.messages import LANGUAGES, bilingual, pick, split_bilingual

# name -> (module, help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("minimodel.selfcheck.command", "self-check a lab / autocomprobar un laboratorio"),
    "train": ("minimodel.train", "train a Mini-GPT / entrenar un Mini-GPT"),
    "evaluate": ("minimodel.evaluate", "loss by position and length / pérdida por posición"),
    "compare": ("minimodel.compare", "train and compare encodings / comparar codificaciones"),
    "generate": ("minimodel.generate", "generate text with a KV cache / generar texto"),
}


class HelpWithDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows each option's default, except an empty one (``None``, ``False``)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """Give the options that have a default but no help text a line that shows the default."""
    for action in parser._actions:
        empty = action.default is None or action.default is False
        if action.help is None and action.option_strings and not empty:
            action.help = "default: %(default)s"


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # also while the subcommands import torch, before anything runs
        print("\n" + bilingual("Interrumpido (Ctrl-C).", "Interrupted (Ctrl-C)."), file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="minimodel", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(
            name, help=help_text, description=help_text, formatter_class=HelpWithDefaults
        )
        module.add_arguments(command)
        if "--lang" not in command._option_string_actions:  # every command speaks either one
            command.add_argument("--lang", choices=LANGUAGES, default=None, help="es | en")
        show_defaults(command)
        command.set_defaults(_run=module.run)
    args = parser.parse_args(argv)
    lang = getattr(args, "lang", None)
    if lang:  # --lang: every message of this run, child processes too
        os.environ["MINIMODEL_LANG"] = lang
    try:
        return args._run(args)
    except Exception as error:
        # KeyError's str() is the repr of its message: the message is its first argument
        message = str(error.args[0] if isinstance(error, KeyError) and error.args else error)
        if not message.startswith("[es] "):  # not one of ours: keep the traceback
            raise
        # a bilingual message says all; no traceback. --lang asked for one language.
        print(pick(*split_bilingual(message), lang) if lang else message, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
