"""Helpers the tests share: LSP clients, the conformance rules, processes."""
