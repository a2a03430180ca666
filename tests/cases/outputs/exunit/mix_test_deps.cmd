# project: mix-deps (tests/cases/problems_cases_lang.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: Mix 1.14.0 (compiled with Erlang/OTP 24)
mix test
