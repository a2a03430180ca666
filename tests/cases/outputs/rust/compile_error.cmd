# project: rust-compile (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: cargo 1.95.0 (f2d3ce0bd 2026-03-21)
cargo test --offline
