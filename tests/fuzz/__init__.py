"""A fuzzer of the language server: generated client sessions, judged by an oracle, written as
replay files and shrunk by delta debugging. See README.md beside this file."""
