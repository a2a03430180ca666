# project: shell (tests/cases/problems_cases_more.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: shellcheck version: 0.9.0
shellcheck -f gcc scripts/deploy.sh
