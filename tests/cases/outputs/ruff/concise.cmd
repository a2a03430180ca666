# project: py-ruff (tests/cases/problems_cases_more.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: ruff 0.17.6
{bin}/ruff check --no-cache --isolated --output-format concise pkg
