"""``python -m ftlsim``: the ``ftlsim`` command."""

from .cli import main

main(prog_name="ftlsim")
