# hwcoll: the two commands are `make run` (the main job) and `make test`.
GO        ?= go
FUZZTIME  ?= 60s
BENCHTIME ?= 1s
CHECKS    ?= 1000
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: run test test-long race bench booksim fuzz soak lint build clean docs figures pgo

run:
	$(GO) run ./cmd/hwcoll demo

build:
	$(GO) build -o bin/hwcoll ./cmd/hwcoll

# Property tests run with rapid's default bound (100 cases each). The race
# pass covers the parallel evaluation (run.workers, kernel modes, the
# lookahead's sends and scheduled values across partitions, a split
# network folding and unfolding; the torus's fold property, 22 s under
# the race detector, runs in the plain pass and in make race) and the
# prefetching of the routers and the crossbar's ports on one and two
# workers (their reads of lines and stores); the random-switch modes
# property (14 s under the race detector) runs in the plain pass and in
# make race. Cold (empty build cache) on this 2-core machine: 296 s before
# that skip.
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race -run 'Modes|Scenarios|Workers|Prefetch|Lookahead|Fold' -skip 'TestKernelModesAgreeOnRandomSwitches|TestPropertyFoldChangesNothing' ./rtl/ ./scenario/ ./experiment/ ./torus/

# Longer property runs: CHECKS cases per property. The flag goes only to
# the packages whose tests link rapid (a test binary without it rejects
# the flag and runs nothing); the others run as in make test.
test-long:
	@set -e; \
	r=$$($(GO) list -test -f '{{.ImportPath}} {{range .Deps}}{{if eq . "pgregory.net/rapid"}}rapid{{end}}{{end}}' ./... | \
		awk '$$2 == "rapid" && $$1 ~ /\.test$$/ { sub(/\.test$$/, "", $$1); print $$1 }'); \
	o=$$($(GO) list ./... | awk -v r="$$r" 'BEGIN { n = split(r, a, "\n"); for (i = 1; i <= n; i++) s[a[i]] = 1 } !($$0 in s)'); \
	echo "$(GO) test -count=1 -timeout 60m <$$(echo "$$r" | wc -l) packages with properties> -args -rapid.checks=$(CHECKS)"; \
	$(GO) test -count=1 -timeout 60m $$r -args -rapid.checks=$(CHECKS); \
	echo "$(GO) test -count=1 -timeout 60m <$$(echo "$$o" | wc -l) packages without>"; \
	$(GO) test -count=1 -timeout 60m $$o

# The race detector slows the model ~10x: experiment alone takes over go
# test's default 10 minutes.
race:
	$(GO) test -count=1 -race -timeout 60m ./...

# Benchmarks are built with the profile hwcoll itself is built with
# (cmd/hwcoll/default.pgo, which go build and go run apply to the binary),
# one package at a time (-p 1): go test otherwise runs as many packages'
# benchmarks at once as there are cores, and each then times the other's
# work and finds no core free for its second worker. About 15 minutes.
bench:
	$(GO) test -p 1 -pgo=$(CURDIR)/$(PGO) -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# hwcoll against BookSim2 per delivered packet, ROUNDS rounds interleaved
# on one core each (about 70 s a round): the 256-node fat-tree and the 8x8
# torus with 8-flit packets (bench/booksim/compare.sh, docs/performance.md,
# "Against BookSim2"). BOOKSIM names a BookSim2 binary built from its
# public repository; nothing of BookSim2 is part of this one.
ROUNDS ?= 3
booksim: build
	BOOKSIM=$(BOOKSIM) bench/booksim/compare.sh $(ROUNDS)

# Profile-guided optimization: regenerate the CPU profile hwcoll is built
# with from the benchmarks of the networks users run (fat-trees, the torus,
# the IB mesh, NICs and messages, collectives, the torus broadcast in
# colours); about three minutes. Rerun it
# after a change to a hot path, then compare with `make bench`. The runs
# are long so that the profile has some 16,000 samples, not 2,000: the
# inliner marks a call hot by its share of them, and the small calls of
# a hop (a link's Settle, a counter's Take) get a few samples each. Two
# profiles still differ by up to ~2 % in the instructions of the build:
# count both by cachegrind and keep the better (docs/performance.md, "A
# profile ten times longer").
PGO        = cmd/hwcoll/default.pgo
PGO_BENCH  = fattree:FatTreeScale/8-port-(64|256|1024)$$:30x torus:TorusScale/nodes=(512|4096)$$:2000x \
             torus:Torus8x8/load=0.3/flits=(1|8)$$:20000x \
             msglayer:ClosedLoop4x4x4:100x experiment:(Collective|IBMeshAllSource|Switch32Load09):10x \
             experiment:BGLTorusBroadcastLanes/lanes=6/colors=3$$:30x
pgo:
	@d=$$(mktemp -d) && set -e && list='$(PGO_BENCH)' && i=0 && for b in $$list; do \
		pkg=$${b%%:*}; rest=$${b#*:}; re=$${rest%:*}; n=$${rest##*:}; \
		i=$$((i+1)); echo "profiling $$pkg $$re ($$n)"; \
		$(GO) test -pgo=off -o $$d/$$pkg.test -run '^$$' -bench "$$re" -benchtime $$n -cpuprofile $$d/$$i.prof ./$$pkg >/dev/null; \
	done && $(GO) tool pprof -proto $$d/*.prof > $(PGO) && rm -rf $$d && echo "wrote $(PGO)"

# A long run (SOAK_CYCLES, default 10^8 cycles of a 64-node fat-tree) whose
# live heap must stay flat.
soak:
	$(GO) test -count=1 -tags soak -run '^TestSoak$$' -timeout 60m -v ./experiment/

# Each fuzz target for FUZZTIME: config files, --set, and hwcoll run's
# argument vector (in-process, short runs).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./config/
	$(GO) test -run '^$$' -fuzz '^FuzzSet$$' -fuzztime $(FUZZTIME) ./config/
	$(GO) test -run '^$$' -fuzz '^FuzzRunArgs$$' -fuzztime $(FUZZTIME) ./cmd/hwcoll/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./irregular/

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin hwcoll-demo

# Every experiment of configs/figures.yaml that the model supports (the
# papers' results, docs/results.md) into figures/NAME/ (CSV, JSON lines, PNG and
# SVG plots) and docs/results.md; about 10 minutes on 2 cores.
# ONLY=name,name reruns some and keeps the others' results.
figures:
	$(GO) run ./cmd/hwcoll figures --jobs $(JOBS) $(if $(ONLY),--only $(ONLY))

# Regenerate the config reference in README.md from the code.
docs:
	$(GO) run ./cmd/hwcoll config keys > .keys.md
	awk 'BEGIN{skip=0} /<!-- config-reference:begin -->/{print; while((getline l < ".keys.md")>0) print l; skip=1; next} /<!-- config-reference:end -->/{skip=0} !skip{print}' README.md > README.md.new
	mv README.md.new README.md; rm -f .keys.md
