# project: go (tests/cases/problems_cases_more.py), run in {ROOT} with sh -c
# recorded on Linux x86_64, Python 3.11.7
# tool: go version go1.19.8 linux/amd64
GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local go vet ./...
