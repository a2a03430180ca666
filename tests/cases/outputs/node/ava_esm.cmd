# project: node-ava-esm (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: ava 6.4.1
# {node} is $LSP_VERIFY_NODE_TOOLS/node_modules/.bin
mkdir -p node_modules && ln -s {node}/../ava node_modules/ava && {node}/ava
