# wirebench: one target per thing a person does.
GO        ?= go
# Packages whose tests also run under the race detector (the engine: capture,
# flow reassembly, batch I/O, dispatch).
RACE_PKGS ?= ./internal/... ./batch/... ./parsers/...
FUZZTIME  ?= 60s
BIN       := bin

.PHONY: all build test bench fuzz clean

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

## clean: remove build output
clean:
	rm -rf $(BIN) benchmark

## traces: regenerate the bundled sample traces in traces/ (byte for byte the committed ones)
.PHONY: traces
traces:
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-plain.pcap --seed 23 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair none
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-impaired.pcap --seed 11 --conns 100 --max-body 32KiB --ipv6 0 --vlan 0 --impair loss=2%,reorder=2%,retransmit=2%,duplicate=2%,fragment=2%
	$(GO) run ./cmd/run-benchmark gen-trace -o traces/http-dns-ipv6-vlan.pcapng --seed 7 --conns 100 --max-body 32KiB --ipv6 60 --vlan 100 --mix http=40,dns=40,tls=6,ssh=3,ntp=4,icmp=7
