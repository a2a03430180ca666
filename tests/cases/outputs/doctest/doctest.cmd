# project: py-doctest (tests/cases/problems_cases_more.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: Python 3.11.7
{python} -m doctest pkg/temps.py
