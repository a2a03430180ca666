# project: test-unit (tests/cases/problems_cases_lang.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: ruby 3.1.2p20 (2022-04-12 revision 4491bb740a) [x86_64-linux-gnu]
ruby -Ilib -Itest test/test_calc.rb
