"""The language server: pygls handlers, the `verify.*` commands, the stdio transport."""
