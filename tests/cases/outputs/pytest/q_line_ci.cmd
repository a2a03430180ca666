# project: py (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: pytest 9.2.0
CI=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -p no:cacheprovider -q --tb=line
