# project: lint (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: ruff 0.17.6
{bin}/ruff check --no-cache --output-format concise pkg
