"""lsp-verify: run a project's own verification command on save, show failures as diagnostics."""

__version__ = "0.1.0"
