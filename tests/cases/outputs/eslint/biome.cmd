# project: eslint (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: biome Version: 2.6.8
# {node} is $LSP_VERIFY_NODE_TOOLS/node_modules/.bin
{node}/biome lint src
