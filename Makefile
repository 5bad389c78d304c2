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

.PHONY: all build test bench fuzz memcheck clean

all: build

## build: build run-benchmark and the tools into ./bin
build:
	$(GO) build -o $(BIN)/ ./cmd/...

## test: vet, then every test (the engine packages also under -race)
test:
	$(GO) vet ./...
	$(GO) test ./...
	$(GO) test -race $(RACE_PKGS)

## bench: preprocess the bundled trace, build the variants, run them, print the table
bench: build
	@echo "make bench: not yet built (needs the runner and the bundled traces)"; exit 1

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

## clean: remove build output
clean:
	rm -rf $(BIN) benchmark

## traces: regenerate the bundled sample traces in traces/ (byte for byte the committed ones)
.PHONY: traces
traces:
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-plain.pcap --seed 23 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair none
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-impaired.pcap --seed 11 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair loss=2%,reorder=2%,retransmit=2%,duplicate=2%,fragment=2%
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-ipv6-vlan.pcapng --seed 7 --conns 100 --max-body 32KiB --ipv6 60 --vlan 100 --mix http=40,dns=40,tls=6,ssh=3,ntp=4,icmp=7
