# quire: make demo, make test, make bench. Each installs what it needs.
GO      ?= go
BIN     := bin/quire
TSC     := .tools/node_modules/.bin/tsc
# -ldflags=-w: the test binaries are linked without DWARF (stack traces
# and profiles need none; a debugger would). Linking the ~40 test binaries
# was a tenth of make test's CPU; without DWARF cmd/quire's links in 2.4-2.5
# s of CPU against 3.5-3.9.
GOTEST  := $(GO) test -count=1 -timeout 20m -ldflags=-w

.PHONY: all build install tools mcp-client browser watchman vendor staticcheck lint cross test test-race test-long ci bench demo fuzz clean

all: build

# The git revision quire --version names, stamped with -ldflags for a
# build the Go toolchain does not stamp itself (a git worktree, a build
# with -buildvcs=false): the commit, its time in UTC, and whether the tree
# had changes. Empty outside git; the toolchain's stamp wins when it has one.
STAMP = -X main.stampRevision=$(shell git rev-parse HEAD 2>/dev/null) \
	-X main.stampTime=$(shell TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null) \
	-X main.stampModified=$(shell [ -z "$$(git status --porcelain 2>/dev/null)" ] && echo false || echo true)

build:
	$(GO) build -ldflags "$(STAMP)" -o $(BIN) ./cmd/quire

# quire on the PATH, in GOBIN or the first folder of GOPATH's bin (where go
# install puts programs): the front (cmd/quire-front) as quire, and the
# whole program as quire-engine beside it, which the front runs for every
# command and hands `quire call` to through the vault's resident engine
# (docs/resident.md). The engine records this source tree, whose .tools/
# (make tools) it then finds wherever it runs. quire tools install puts
# typescript@7 into the user's cache directory instead, for a quire
# installed any other way. A plain go install ./cmd/quire is the whole
# program alone, as quire: it works, without the resident.
INSTALLDIR = $(or $(shell $(GO) env GOBIN),$(firstword $(subst :, ,$(shell $(GO) env GOPATH)))/bin)
install: tools
	mkdir -p $(INSTALLDIR)
	$(GO) build -ldflags "-X quire/fold/module.SourceTree=$(CURDIR) $(STAMP)" -o $(INSTALLDIR)/quire-engine ./cmd/quire
	$(GO) build -o $(INSTALLDIR)/quire ./cmd/quire-front

# The TypeScript compiler that checks pages' modules (typescript@7, native
# tsc), installed into .tools/ from npm.
tools: $(TSC)
$(TSC):
	@command -v npm >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; } || { echo "npm is needed to install typescript@7: apt-get install nodejs npm"; exit 1; }
	mkdir -p .tools
	cd .tools && ( [ -f package.json ] || echo '{"private":true}' > package.json ) && npm install --no-audit --no-fund typescript@7

# The official MCP TypeScript SDK's client, which serve's tests drive quire
# with as a third-party agent host would (serve/testdata/mcp-client), from
# npm into its node_modules/ (ignored by git).
MCPSDK := serve/testdata/mcp-client/node_modules/@modelcontextprotocol/sdk/package.json
mcp-client: $(MCPSDK)
$(MCPSDK):
	@command -v npm >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null; } || { echo "npm is needed to install the MCP SDK's client: apt-get install nodejs npm"; exit 1; }
	cd serve/testdata/mcp-client && npm install --no-audit --no-fund --no-package-lock

# Debian's chromium, which the browser tests drive headless from Go
# (internal/browser). Installed with apt-get when missing and we are root;
# else the target says what to do. QUIRE_CHROMIUM names another binary.
browser:
	@[ -n "$$QUIRE_CHROMIUM" ] || [ -x /usr/bin/chromium ] || command -v chromium >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && echo "installing chromium with apt-get" && \
	    { apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; }; } || \
	  { echo "chromium is needed for the browser tests: apt-get install chromium (as root), or set QUIRE_CHROMIUM to a Chromium or Chrome binary"; exit 1; }

# Watchman, the file system monitor the README sets up on Linux, which the
# bench's scale section measures git status and quire check with, and a
# test of the vault asks (quire asks it over its socket what git's hook
# would): installed with apt-get when missing and we are root, with
# inotify watches enough for the 100,000-run vault (one a folder); else
# the bench says why it is not measured, and that test fails saying so.
watchman:
	@command -v watchman >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && echo "installing watchman with apt-get" && \
	    { apt-get install -y -qq watchman >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq watchman >/dev/null; }; }; } || \
	  echo "watchman is not installed (apt-get install watchman): the bench measures git status and quire check without a monitor only, and a test of the vault fails"
	@[ "$$(cat /proc/sys/fs/inotify/max_user_watches 2>/dev/null || echo 524288)" -ge 524288 ] || \
	  { [ "$$(id -u)" = 0 ] && sysctl -q -w fs.inotify.max_user_watches=524288; } || \
	  echo "fs.inotify.max_user_watches is under 524288 (sysctl -w fs.inotify.max_user_watches=524288, as root)"

# Observable Plot and d3, vendored in serve/web/assets/static/vendor/ (the
# committed files are the source; nothing is fetched at run time): fetch them
# from npm at their pinned versions and check them byte for byte against the
# committed copies' SHA256SUMS. vendor.sh --update re-vendors.
vendor:
	bash serve/web/assets/vendor.sh

# The tests alone. go vet is not run here but in make lint, with gofmt,
# go mod tidy and staticcheck, which .ci/run runs first: on 2 cores a vet
# of every package ahead of the tests added some 20 s to make test, and go
# test already runs vet's surest checks on each package it tests.
#
# The tests' temporary folders (vaults, git repositories, fold workers,
# Chromium's profile) go to a folder in /dev/shm when there is one: a
# memory file system, where the thousands of fsyncs of the tests' commits
# cost nothing (measured: 97 s on disk, 78 s there). Killing a writer,
# what the crash tests do, leaves the same files on either. The folder is
# emptied first, but for the compiled QuickJS the fold workers share; it is
# one per checkout, so two checkouts' tests never empty each other's.
TESTTMP := $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm/quire-test-$$(echo '$(CURDIR)' | cksum | cut -d' ' -f1))
# GOGC=400: the tests' processes (the test binaries, the quire, quire
# serve and fold worker processes they start) collect their garbage a
# quarter as often. make test is CPU-bound on 2 cores; on the machine of
# 2026-12-07 it took 123 s with 223 s of CPU, and 110 s with 200 s of CPU
# at GOGC=400, run back to back. The tests that measure the heap collect
# it themselves (runtime.GC, debug.SetGCPercent).
TESTENV := GOGC=400 $(if $(TESTTMP),TMPDIR=$(TESTTMP))
# make test goes further: no collection until a process's heap reaches 1
# GiB (GOGC=off with GOMEMLIMIT). Its processes are short or hold little,
# so most never collect; the whole run peaked at 2.3 GB of the machine's
# memory. Back to back: 88 s with 155 s of CPU at GOGC=400, 83 s with 148
# s of CPU so. The race detector's runs keep GOGC=400: its shadow memory
# grows with the heap. quire serve sets no limit of its own under
# GOMEMLIMIT (servememory.go), which no test of make test measures.
TESTGC := GOGC=off GOMEMLIMIT=1GiB
define testtmp
	@if [ -n "$(TESTTMP)" ]; then mkdir -p $(TESTTMP) && find $(TESTTMP) -mindepth 1 -maxdepth 1 ! -name quire-fold-qjs-cache -exec rm -rf {} +; fi
endef

# -parallel 4: most of cmd/quire's tests wait on the processes they start
# (quire serve, git, the resident), so four at a time on 2 cores took its
# 46 s to 31 s, measured back to back.
test: tools mcp-client browser watchman
	$(testtmp)
	$(TESTENV) $(TESTGC) $(GOTEST) -parallel 4 ./...

# staticcheck at a pinned version, built into bin/.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/staticcheck-$(STATICCHECK_VERSION)
staticcheck: $(STATICCHECK)
$(STATICCHECK):
	mkdir -p bin
	GOBIN=$(CURDIR)/bin/.staticcheck $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/.staticcheck/staticcheck $@ && rmdir bin/.staticcheck

# What a change must pass besides the tests: gofmt, go vet, go mod tidy
# leaving go.mod and go.sum as they are, and staticcheck.
lint: $(STATICCHECK)
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt -l: not formatted:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(STATICCHECK) ./...

# quire is tested on Linux; on macOS and Windows it is built (and vetted),
# not tested: these builds keep the platform files (internal/fsys, the
# cpu_*.go and cputime_*.go files) compiling.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...

# The tests under the race detector. fold's tests are the slow part: its
# workers run QuickJS's compiled wasm ten times and more slower, so the
# cases that time a fold's bounds run in make test alone (fold/stall_test.go).
test-race: tools mcp-client browser watchman
	$(testtmp)
	$(TESTENV) $(GO) test -race -count=1 -timeout 45m ./...

# The long variants (QUIRE_TEST_LONG=1): a kill at every step of every
# writing operation, the random-kill test with 8 writers and a server, more
# writers and events, the bounds reached through the operations themselves.
test-long: tools mcp-client browser watchman
	$(testtmp)
	$(TESTENV) QUIRE_TEST_LONG=1 $(GO) test -count=1 -timeout 60m ./...

# What CI runs (.ci/run): 90 minutes on 2 cores in all.
ci: lint cross test test-race test-long

# Benchmarks: never part of make test. Prints every figure the issues ask
# for: medians of repeated runs, and ratios of things measured side by side.
BENCH_COUNT ?= 5
bench: tools build watchman
	$(GO) run ./cmd/quire-bench
	( $(GO) test -run '^$$' -bench 'CheckFulfillOrderWithTemplates|CheckSeries2000$$|GetDefinitionFulfillOrder|GetRunFulfillOrder|BoundaryCommit|Open20000|Parse$$|RenderFulfill' -count $(BENCH_COUNT) \
	    ./ledger/pagecheck/ ./words/shape/ ./ledger/ ./vault/ ./words/address/ ./render/ ; \
	  $(GO) test -run '^$$' -bench 'FoldExamples|FoldRatio|FoldMorning$$|ShapeCheckCost' -benchtime 1x -count 3 -timeout 90m ./fold/ ; \
	  $(GO) test -run '^$$' -bench 'HTTPAppend' -benchtime 1x -count 1 ./serve/ ; \
	  $(GO) test -run '^$$' -bench 'ListRunCommits50000' -benchtime 200x -count 1 ./ledger/ ; \
	  $(GO) test -run '^$$' -bench 'TryPageFulfillOrder' -benchtime 1x -count 1 ./ledger/ ; \
	  $(GO) test -run '^$$' -bench 'BoundaryWithPages' -benchtime 40x -count 1 -timeout 60m ./ledger/ ; \
	  $(GO) test -run '^$$' -bench 'LongRunBoundary' -benchtime 5x -count 1 -timeout 30m ./ledger/ ; \
	  $(GO) test -run '^$$' -bench 'RenderPageAtFulfillOrder' -benchtime 50x -count 1 ./ledger/ ; \
	  $(GO) test -run '^$$' -bench 'ReceiptMorning' -benchtime 3x -count 1 ./ledger/ ; \
	  $(GO) test -run '^$$' -bench 'DefinitionPageFulfillOrder' -benchtime 50x -count 1 ./serve/web/ ; \
	  $(GO) test -run '^$$' -bench 'ListPagesWithDefinitions' -benchtime 20x -count 1 -timeout 30m ./serve/web/ ; \
	  $(GO) test -run '^$$' -bench 'RunPage50000' -benchtime 100x -count 1 -timeout 60m ./serve/web/ ; \
	  $(GO) test -run '^$$' -bench 'DrawFulfillOrder' -benchtime 5x -count 1 ./serve/web/assets/ ) 2>&1 | tee .bench.out | $(GO) run ./cmd/quire-bench -summarize

# The main job: build quire, make a sample vault from testdata/ and run it.
demo: tools build
	bash testdata/demo.sh

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./words/address/
	$(GO) test -run '^$$' -fuzz FuzzCheck -fuzztime 30s ./words/shape/
	$(GO) test -run '^$$' -fuzz FuzzLine -fuzztime 30s ./words/event/
	$(GO) test -run '^$$' -fuzz FuzzParseFront -fuzztime 30s ./runfolder/
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime 30s ./internal/front/
	$(GO) test -run '^$$' -fuzz FuzzScan -fuzztime 30s ./internal/jsscan/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./words/page/
	$(GO) test -run '^$$' -fuzz FuzzCheckTemplate -fuzztime 30s ./render/
	$(GO) test -run '^$$' -fuzz FuzzRunKey -fuzztime 30s ./ledger/
	$(GO) test -run '^$$' -fuzz FuzzLayout -fuzztime 30s ./render/
	$(GO) test -run '^$$' -fuzz FuzzInspect -fuzztime 30s ./words/agentrun/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./words/agentrun/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./vault/git/index/
	$(GO) test -run '^$$' -fuzz FuzzJSON -fuzztime 30s ./words/canon/
	$(GO) test -run '^$$' -fuzz '^FuzzReadLoose$$' -fuzztime 30s ./vault/git/object/
	$(GO) test -run '^$$' -fuzz FuzzReadLooseToHash -fuzztime 30s ./vault/git/object/
	$(GO) test -run '^$$' -fuzz FuzzParseTree -fuzztime 30s ./vault/git/object/
	$(GO) test -run '^$$' -fuzz FuzzParseCommit -fuzztime 30s ./vault/git/object/
	$(GO) test -run '^$$' -fuzz FuzzReader -fuzztime 30s ./vault/git/pack/
	$(GO) test -run '^$$' -fuzz FuzzDelta -fuzztime 30s ./vault/git/pack/
	$(GO) test -run '^$$' -fuzz FuzzDiffTrees -fuzztime 30s ./vault/git/walk/
	$(GO) test -run '^$$' -fuzz FuzzDiff -fuzztime 30s ./words/viewdiff/
	$(GO) test -run '^$$' -fuzz FuzzOwnEntryIsJSONs -fuzztime 30s ./vault/
	$(GO) test -run '^$$' -fuzz FuzzDecodeRecord -fuzztime 30s ./ledger/checker/
	$(GO) test -run '^$$' -fuzz FuzzParseMonitorAnswer -fuzztime 30s ./vault/
	$(GO) test -run '^$$' -fuzz FuzzReadInPlace -fuzztime 30s ./vault/git/index/

clean:
	rm -rf bin demo-vault
