"""One argparse subcommand a module. Each exposes ``register(subparsers)``.

A command's ``run(args) -> int`` returns the process's exit code; it raises
``shell.errors.UserError`` for anything a person did wrong, which ``shell.cli`` turns into
one clear line on stderr and the error's exit code.
"""
