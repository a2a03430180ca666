# project: py-script (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: Python 3.11.7
{python} main.py json; {python} main.py key; {python} bad.py; {python} -W always warn.py
