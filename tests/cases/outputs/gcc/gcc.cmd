# project: c (tests/cases/problems_cases.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: gcc (Debian 12.2.0-14+deb12u1) 12.2.0
gcc -Wall -fsyntax-only src/main.c
