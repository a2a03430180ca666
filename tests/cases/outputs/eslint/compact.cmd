# project: eslint (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: eslint v8.57.1
# {node} is $LSP_VERIFY_NODE_TOOLS/node_modules/.bin
{node}/eslint --no-eslintrc --env node --parser-options ecmaVersion:2022 --rule '{"no-unused-vars": "error", "no-var": "warn"}' --format compact src
