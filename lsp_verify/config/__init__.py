"""Settings: the editor's and `.lsp-verify.toml`, parsed with messages."""
