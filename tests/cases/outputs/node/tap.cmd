# project: node-tap (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: tap 21.8.0
# {node} is $LSP_VERIFY_NODE_TOOLS/node_modules/.bin
ln -s {node}/../tap node_modules/tap && {node}/tap -R tap --disable-coverage
