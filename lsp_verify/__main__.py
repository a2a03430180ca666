import sys

from lsp_verify.cli import main

sys.exit(main())
