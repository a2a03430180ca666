"""Start the lsp-verify server bundled with the VS Code extension.

The extension runs `python -I serve.py`: isolated mode keeps the user's PYTHONPATH and user
site-packages from shadowing the bundled pygls, while the environment itself (PYTHONPATH
included) still reaches the verification command the server runs.
"""

import os
import sys

# Kept runnable on any Python, so that an old one says why instead of a SyntaxError.
if sys.version_info < (3, 9):  # noqa: UP036
    version = sys.version.split()[0]
    sys.stderr.write("lsp-verify needs Python 3.9 or newer; this is " + version + ".\n")
    sys.exit(3)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "libs"))

# Imported only now: the bundled libs must be on sys.path first.
from lsp_verify.cli import main

sys.exit(main(["serve"]))
