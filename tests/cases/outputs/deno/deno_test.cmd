# project: deno (tests/cases/problems_cases_lang.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: deno 2.9.6 (stable, release, x86_64-unknown-linux-gnu)
deno test
