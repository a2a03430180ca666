# project: lint (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: mypy 1.20.2 (compiled: yes)
{bin}/mypy --no-incremental --cache-dir=/dev/null pkg
