# project: c-make (tests/cases/problems_cases_more.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: GNU Make 4.3; cc (Debian 12.2.0-14+deb12u1) 12.2.0
make recursive
