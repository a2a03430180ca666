# project: vitest (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: vitest/3.2.7 linux-x64 node-v20.20.2
# {node} is $LSP_VERIFY_NODE_TOOLS/node_modules/.bin
{node}/vitest run
