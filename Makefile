# wirebench: one target per thing a person does.
GO        ?= go
# Packages whose tests also run under the race detector (the engine: capture,
# flow reassembly, batch I/O, dispatch).
RACE_PKGS ?= ./internal/... ./batch/... ./parsers/...
FUZZTIME  ?= 60s
BIN       := bin
# memcheck: the trace size, the peak RSS preprocess must stay under, and the
# traces the large trace is made from (corpus traces, when the corpus is
# next to the repository; any pcap files of one link type will do).
MEMCHECK_SIZE   ?= 1GB
MEMCHECK_LIMIT  ?= 150MB
MEMCHECK_INPUTS ?= $(wildcard $(addprefix ../shared/corpus/traces/,http/206_example_b.pcap http/methods.pcap dce-rpc/mapi.pcap var-services-std-ports.pcap))

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
BENCH_RUN   ?=
# pgo: the trace the committed PGO profiles (cmd/*/default.pgo) are made
# from; default impairments, as real traffic has some.
PGO_GEN     ?= --seed 4 --size 300MB --max-body 256KiB --mix http=45,dns=1500,tls=6,ssh=2,ntp=4,icmp=3
# run-benchmark itself is built like the static binaries, so that "build"
# finds most of their packages compiled already.
TOOL_BUILD  = CGO_ENABLED=0 $(GO) build -trimpath -pgo=off -o $(BIN)/ ./cmd/run-benchmark

.PHONY: all build test bench pgo fuzz memcheck clean

all: build

## build: build run-benchmark and the tools into ./bin
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## test: vet, then every test (the engine packages also under -race)
# Tests are built without PGO, as are the programs they build: profiles
# change how fast code runs, not what it does, and compiling the
# dependencies of the packages with a default.pgo once more, with it,
# would add a minute of CPU time to a cold build cache.
test: export GOFLAGS := $(strip $(GOFLAGS) -pgo=off)
test:
	$(GO) vet ./...
	$(GO) test ./...
	$(GO) test -race $(RACE_PKGS)

## bench: generate a 100 MB trace from a seed, preprocess it, build the variants,
## run them and print the table (BENCH_RUN adds flags to run, e.g. BENCH_RUN="-n 5")
bench:
	$(TOOL_BUILD)
	mkdir -p $(dir $(BENCH_TRACE))
	$(BIN)/run-benchmark gen-trace -o $(BENCH_TRACE) $(BENCH_GEN)
	$(BIN)/run-benchmark preprocess -o $(BENCH_DATA) $(BENCH_TRACE)
	GO=$(GO) $(BIN)/run-benchmark -d $(BENCH_DIR) build
	$(BIN)/run-benchmark -d $(BENCH_DIR) -t $(BENCH_DATA) run $(BENCH_RUN)

## pgo: remake the committed PGO profiles (cmd/*/default.pgo) from a generated
## 300 MB trace (in a temporary directory), then build the variants with them
pgo:
	$(TOOL_BUILD)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(BIN)/run-benchmark gen-trace -o "$$tmp/pgo.pcap" --truth none $(PGO_GEN); \
	  $(BIN)/run-benchmark preprocess -o "$$tmp/data" "$$tmp/pgo.pcap"; \
	  GO=$(GO) $(BIN)/run-benchmark -d $(BENCH_DIR) build --pgo-from "$$tmp/data"

## fuzz: run every fuzz target for $(FUZZTIME) each
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## memcheck: preprocess a $(MEMCHECK_SIZE) trace made in a temporary directory;
## fail when the peak RSS exceeds $(MEMCHECK_LIMIT) (also times tcpdump on it)
memcheck:
	$(GO) build -o $(BIN)/ ./cmd/run-benchmark ./scripts/inflate-trace ./scripts/memcheck
	$(BIN)/memcheck -run-benchmark $(BIN)/run-benchmark -inflate-trace $(BIN)/inflate-trace \
	  -size $(MEMCHECK_SIZE) -limit $(MEMCHECK_LIMIT) $(MEMCHECK_INPUTS)

## clean: remove build output, and the benchmark's binaries, trace and results
clean:
	rm -rf $(BIN) $(BENCH_DIR)

## traces: regenerate the bundled sample traces in traces/ (byte for byte the committed ones)
.PHONY: traces
traces:
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-plain.pcap --seed 23 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair none
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-impaired.pcap --seed 11 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair loss=2%,reorder=2%,retransmit=2%,duplicate=2%,fragment=2%
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-ipv6-vlan.pcapng --seed 7 --conns 100 --max-body 32KiB --ipv6 60 --vlan 100 --mix http=40,dns=40,tls=6,ssh=3,ntp=4,icmp=7
