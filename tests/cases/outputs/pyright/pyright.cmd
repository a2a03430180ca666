# project: py-typed (tests/cases/problems_cases_more.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: pyright 1.1.414
# {node} is $LSP_VERIFY_NODE_TOOLS/node_modules/.bin
{node}/pyright pkg
