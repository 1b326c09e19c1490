"""The ``minimodel`` command: one subcommand per job.

Each subcommand lives in its own module and exposes ``add_arguments(parser)`` and
``run(args) -> int``; registering one is a line in ``SUBCOMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module, help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": ("minimodel.selfcheck.command", "self-check a lab / autocomprobar un laboratorio"),
    "train": ("minimodel.train", "train a Mini-GPT / entrenar un Mini-GPT"),
    "evaluate": ("minimodel.evaluate", "loss by position and length / pérdida por posición"),
    "compare": ("minimodel.compare", "train and compare encodings / comparar codificaciones"),
    "generate": ("minimodel.generate", "generate text with a KV cache / generar texto"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="minimodel", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        command = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    args = parser.parse_args(argv)
    try:
        return args._run(args)
    except Exception as error:
        if not str(error).startswith("[es] "):  # not one of ours: keep the traceback
            raise
        print(error, file=sys.stderr)  # a bilingual message says all; no traceback
        return 2


if __name__ == "__main__":
    sys.exit(main())
