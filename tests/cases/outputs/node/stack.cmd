# project: node-crash (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: node v20.20.2
node lib/index.js; node lib/bad.js; node lib/esm.mjs
