# project: minitest (tests/cases/problems_cases_lang.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: rake, version 13.0.6
rake test
