# wirebench: one target per thing a person does.
GO        ?= go
# Packages whose tests also run under the race detector (the engine: capture,
# flow reassembly, batch I/O, dispatch).
RACE_PKGS ?= ./internal/... ./batch/... ./parsers/...
FUZZTIME  ?= 60s
BIN       := bin
# memcheck: the trace size, the peak RSS preprocess and analyze must stay under, and the
# traces the large trace is made from (the bundled ones by default; any pcap
# files of one link type will do, e.g. real captures of your own).
MEMCHECK_SIZE   ?= 1GB
MEMCHECK_LIMIT  ?= 150MB
MEMCHECK_INPUTS ?= traces/http-dns-plain.pcap traces/http-dns-impaired.pcap traces/loopback-sample.pcap
# scalecheck: the trace size, the worker count timed against one, the
# alternating runs of each, and more flags of scripts/scalecheck (-trace
# FILE to time a trace of your own; the trace is made from MEMCHECK_INPUTS).
SCALECHECK_SIZE    ?= 1GB
SCALECHECK_WORKERS ?= 2
SCALECHECK_RUNS    ?= 3
SCALECHECK_FLAGS   ?=
# sigcheck: the trace the commands are signalled on, and the trials per
# command and signal.
SIGCHECK_SIZE   ?= 500MB
SIGCHECK_TRIALS ?= 20

# hostile: the size of the attack traces (2: twice the sizes), and more
# flags of scripts/hostile (-seed, -only, -o DIR to keep the traces).
HOSTILE_SCALE ?= 1
HOSTILE_FLAGS ?=

# bench: the trace make bench times, generated from a seed (the same bytes
# on every machine) into $(BENCH_DIR), and preprocessed into $(BENCH_DATA).
# No impairments: every variant must then find the same records, so a
# count warning means a parser is wrong. DNS weighs 1500 against HTTP's 45
# so that DNS, whose messages are small, makes a sizeable share of the
# bytes.
BENCH_DIR   ?= benchmark
BENCH_DATA  ?= $(BENCH_DIR)/data
BENCH_TRACE ?= $(BENCH_DIR)/bench.pcap
BENCH_GEN   ?= --seed 1 --size 100MB --max-body 256KiB --mix http=45,dns=1500,tls=6,ssh=2,ntp=4,icmp=3 --impair none
# The runs: 7 a variant (enough for a 95 % interval of each ratio; 4 are
# the least), each of several executions in a row so that it lasts 0.5 s
# of user time (one execution of a replay binary on this trace takes some
# 0.05 s: a dozen clock ticks), tshark, some 50 times slower, 3 times.
# BENCH_RUN adds to or overrides them.
BENCH_FLAGS ?= -n 7 --min-time 0.5s --tshark-runs 3
BENCH_RUN   ?=
# A variants file whose rows make bench adds to the table (build and run
# read it); bench-peers sets it to the Go peers'.
BENCH_VARIANTS ?=
BENCH_VFLAG  = $(if $(BENCH_VARIANTS),--variants-file $(BENCH_VARIANTS))
# pgo: the trace the committed PGO profiles (cmd/*/default.pgo) are made
# from; default impairments, as real traffic has some.
PGO_GEN     ?= --seed 4 --size 300MB --max-body 256KiB --mix http=45,dns=1500,tls=6,ssh=2,ntp=4,icmp=3
# run-benchmark itself is built like the static binaries, so that "build"
# finds most of their packages compiled already.
TOOL_BUILD  = CGO_ENABLED=0 $(GO) build -trimpath -pgo=off -o $(BIN)/ ./cmd/run-benchmark

# microbench: the packages whose benchmarks run, how many interleaved runs,
# how long each benchmark runs per run, which benchmarks (a -bench regexp),
# and the benchstat that sums them up (fetched once into $(BIN)).
MICROBENCH_PKGS ?= parsers/http parsers/dns
COUNT           ?= 6
BENCHTIME       ?= 200ms
MICROBENCH      ?= .
BENCHSTAT       ?= golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
# staticcheck, pinned so that a new release cannot turn make test red on its own.
STATICCHECK     ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The example peers: modules of their own, vetted and tested by make test too.
EXAMPLES        ?= examples/fasthttp examples/gopacket-dns

.PHONY: all build test bench bench-peers statcheck pgo fuzz memcheck scalecheck sigcheck hostile microbench clean help

all: build

## help: list these targets with what each does
help:
	@awk '!/^## / { prev = 0; next } \
	  !prev && /^## [a-z-]+: / { t = $$2; sub(/:$$/, "", t); sub(/^## [a-z-]+: /, ""); printf "  %-11s %s\n", t, $$0; prev = 1; next } \
	  { sub(/^## /, ""); printf "  %-11s %s\n", "", $$0; prev = 1 }' $(firstword $(MAKEFILE_LIST))

## build: build run-benchmark and the tools into ./bin
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## test: vet and staticcheck, then every test (the engine packages also under -race),
## and the same in each example module (examples/fasthttp, examples/gopacket-dns)
# Tests are built without PGO, as are the programs they build: profiles
# change how fast code runs, not what it does, and compiling the
# dependencies of the packages with a default.pgo once more, with it,
# would add a minute of CPU time to a cold build cache.
test: export GOFLAGS := $(strip $(GOFLAGS) -pgo=off)
test:
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) test ./...
	$(GO) test -race $(RACE_PKGS)
	$(GO) test -race -run 'Workers|Shard' ./preprocess ./cmd/analyze
	@set -e; for m in $(EXAMPLES); do \
	  echo "== $$m"; \
	  (cd $$m && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./... && $(GO) test ./...); \
	done

## bench: generate a 100 MB trace from a seed, preprocess it, build the variants,
## run them and print the table and its statistics (BENCH_RUN adds flags to run, e.g. BENCH_RUN="-n 10")
bench:
	$(TOOL_BUILD)
	mkdir -p $(dir $(BENCH_TRACE))
	$(BIN)/run-benchmark gen-trace -o $(BENCH_TRACE) $(BENCH_GEN)
	$(BIN)/run-benchmark preprocess -o $(BENCH_DATA) $(BENCH_TRACE)
	GO=$(GO) $(BIN)/run-benchmark -d $(BENCH_DIR) build $(BENCH_VFLAG)
	$(BIN)/run-benchmark -d $(BENCH_DIR) -t $(BENCH_DATA) run $(BENCH_FLAGS) $(BENCH_VFLAG) $(BENCH_RUN)

## bench-peers: make bench with the Go peers of examples/peers.toml in the table: HTTP over
## fasthttp's header parsers, DNS over gopacket (rows P-NAME-static, P-NAME-opt, P-analyze-NAME)
bench-peers:
	$(MAKE) bench BENCH_VARIANTS=examples/peers.toml

## statcheck: the statistics check of compare (not part of make test; a minute or two):
## with a calibrated CPU burner, a 10 % slowdown is flagged in >= 9 of 10 trials of 10 runs
## a side, identical builds raise no alarm in >= 9 of 10
statcheck:
	WIREBENCH_STATCHECK=1 $(GO) test -count=1 -v -run '^TestCompareCalibrated$$' ./internal/runner

## pgo: remake the committed PGO profiles (cmd/*/default.pgo) from a generated
## 300 MB trace (in a temporary directory), then build the variants with them
pgo:
	$(TOOL_BUILD)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(BIN)/run-benchmark gen-trace -o "$$tmp/pgo.pcap" --truth none $(PGO_GEN); \
	  $(BIN)/run-benchmark preprocess -o "$$tmp/data" "$$tmp/pgo.pcap"; \
	  GO=$(GO) $(BIN)/run-benchmark -d $(BENCH_DIR) build --pgo-from "$$tmp/data"

## fuzz: run every fuzz target for $(FUZZTIME) each (the example modules' too)
fuzz:
	@set -e; for m in . $(EXAMPLES); do \
	  for pkg in $$(cd $$m && $(GO) list ./...); do \
	    for t in $$(cd $$m && $(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	      echo "== $$pkg $$t"; \
	      (cd $$m && $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg); \
	    done; \
	  done; \
	done

## memcheck: preprocess and analyze a $(MEMCHECK_SIZE) trace made in a temporary directory;
## fail when the peak RSS exceeds $(MEMCHECK_LIMIT) (also times tcpdump on it)
memcheck:
	$(GO) build -o $(BIN)/ ./cmd/run-benchmark ./cmd/analyze ./scripts/inflate-trace ./scripts/memcheck
	$(BIN)/memcheck -run-benchmark $(BIN)/run-benchmark -analyze $(BIN)/analyze -inflate-trace $(BIN)/inflate-trace \
	  -size $(MEMCHECK_SIZE) -limit $(MEMCHECK_LIMIT) $(MEMCHECK_INPUTS)

## scalecheck: time analyze and preprocess on a $(SCALECHECK_SIZE) trace made in a temporary
## directory with --workers 1 and $(SCALECHECK_WORKERS), alternating; print the speedup, CPU ratio
## and peak RSS, and fail below a 1.7x speedup or above 15 % more CPU time for analyze
scalecheck:
	$(GO) build -o $(BIN)/ ./cmd/run-benchmark ./cmd/analyze ./scripts/inflate-trace ./scripts/scalecheck
	$(BIN)/scalecheck -analyze $(BIN)/analyze -run-benchmark $(BIN)/run-benchmark -inflate-trace $(BIN)/inflate-trace \
	  -size $(SCALECHECK_SIZE) -workers $(SCALECHECK_WORKERS) -runs $(SCALECHECK_RUNS) $(SCALECHECK_FLAGS) $(MEMCHECK_INPUTS)

## sigcheck: signal preprocess, analyze and the replay binaries at random moments
## ($(SIGCHECK_TRIALS) trials per command and signal on a $(SIGCHECK_SIZE) trace made in a
## temporary directory) and check that every output is whole and closed
sigcheck:
	$(GO) build -o $(BIN)/ ./cmd/run-benchmark ./cmd/analyze ./cmd/http-parser ./cmd/dns-parser ./scripts/sigcheck
	$(BIN)/sigcheck -bin $(BIN) -size $(SIGCHECK_SIZE) -trials $(SIGCHECK_TRIALS)

## hostile: write the hostile traces of scripts/hostile (hash flooding, out-of-order
## segments, sparse fragments, SYN and UDP floods, partial lines; HOSTILE_SCALE times
## their sizes) with random-SYN baselines of the same sizes, run analyze and preprocess
## on each, print CPU seconds and peak RSS per attack, and fail above 3x the
## baseline's CPU time or 512 MB (about 1 GB of traces in $$TMPDIR, 5 minutes)
hostile:
	$(GO) build -o $(BIN)/ ./cmd/run-benchmark ./cmd/analyze ./scripts/hostile
	$(BIN)/hostile -scale $(HOSTILE_SCALE) -analyze $(BIN)/analyze -run-benchmark $(BIN)/run-benchmark $(HOSTILE_FLAGS)

## microbench: the parsers' microbenchmarks, native against net/http and
## fasthttp, and against miekg/dns, dnsmessage and gopacket, on named
## workloads: $(COUNT) runs of each package in turn (drifts in the machine's
## load hit every parser alike), printed as benchstat tables with the other
## parsers side by side with native (about 3 minutes with the defaults;
## raw results in $(BIN)/microbench.txt)
microbench:
	@mkdir -p $(BIN)/microbench
	@echo "make microbench: building the benchmarks of $(MICROBENCH_PKGS)" >&2
	@set -e; for p in $(MICROBENCH_PKGS); do \
	  $(GO) test -c -o $(BIN)/microbench/$$(echo $$p | tr / -).test ./$$p; \
	done
	@if ! GOBIN=$(CURDIR)/$(BIN) $(GO) install $(BENCHSTAT) 2>$(BIN)/microbench/benchstat.log; then \
	  echo "make microbench: cannot fetch benchstat ($(BENCHSTAT)); the benchmarks run anyway" >&2; \
	  echo "  (go install failed, see $(BIN)/microbench/benchstat.log; it needs the module proxy once, the module cache after)" >&2; \
	  rm -f $(BIN)/benchstat; \
	fi
	@set -e; out=$(CURDIR)/$(BIN)/microbench.txt; : > $$out; \
	for i in $$(seq $(COUNT)); do \
	  for p in $(MICROBENCH_PKGS); do \
	    echo "make microbench: run $$i of $(COUNT): $$p" >&2; \
	    bin=$(CURDIR)/$(BIN)/microbench/$$(echo $$p | tr / -).test; \
	    if ! (cd $$p && $$bin -test.run '^$$' -test.bench '$(MICROBENCH)' -test.benchmem \
	        -test.benchtime $(BENCHTIME) -test.count 1 >> $$out); then \
	      echo "make microbench: the benchmarks of $$p failed (output in $(BIN)/microbench.txt)" >&2; exit 1; \
	    fi; \
	  done; \
	done
	@# Name each parser of the side-by-side benchmarks (BenchmarkParse/WORKLOAD/PARSER)
	@# impl=PARSER, so that benchstat puts them in columns, each against native.
	@sed -E 's#^(BenchmarkParse/[^/[:space:]]+)/([^/[:space:]]+)([[:space:]])#\1/impl=\2\3#' \
	  $(BIN)/microbench.txt > $(BIN)/microbench/by-impl.txt
	@if [ ! -x $(BIN)/benchstat ]; then \
	  echo "make microbench: no benchstat to print the tables; the results are in $(BIN)/microbench.txt" >&2; exit 1; \
	fi
	@echo; echo "== parsers side by side (each column against native)"; echo
	@$(BIN)/benchstat -col /impl -filter '.name:Parse .unit:(sec/op OR B/op OR allocs/op)' $(BIN)/microbench/by-impl.txt
	@echo; echo "== the other benchmarks: ratios measured in turns, analysis tiers, ceilings"; echo
	@$(BIN)/benchstat -filter '-.name:Parse .unit:/^(sec\/op|allocs\/op|.*\/native)$$/' results=$(BIN)/microbench/by-impl.txt

## clean: remove build output, and the benchmark's binaries, trace and results
clean:
	rm -rf $(BIN) $(BENCH_DIR)

## traces: regenerate the bundled sample traces in traces/ (byte for byte the committed ones)
.PHONY: traces
traces:
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-plain.pcap --seed 23 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair none
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-impaired.pcap --seed 11 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair loss=2%,reorder=2%,retransmit=2%,duplicate=2%,fragment=2%
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-ipv6-vlan.pcapng --seed 7 --conns 100 --max-body 32KiB --ipv6 60 --vlan 100 --mix http=40,dns=40,tls=6,ssh=3,ntp=4,icmp=7
