package traces

import (
	"encoding/json"
	"fmt"
	"os"
)

// TruthVersion is the version of the truth file layout and of the
// generator's output: traces made by the same version from the same
// Config are identical.
const TruthVersion = 1

// Truth is what a correct analyzer finds in a generated trace. It is
// written next to the trace as FILE.truth.json. Counts are exact: the
// impairments never hit a byte that decides whether a message is there
// (see the package documentation).
type Truth struct {
	// Version is TruthVersion; Config is the configuration that made the
	// trace (generate it again with it to get the same bytes).
	Version int    `json:"version"`
	Config  Config `json:"config"`

	// Packets is the number of frames in the file, FileBytes its size.
	Packets   int64 `json:"packets"`
	FileBytes int64 `json:"file_bytes"`
	// DurationNS is the time from the first to the last frame.
	DurationNS int64 `json:"duration_ns"`

	// Connections counts transport conversations as Zeek's conn.log does:
	// TCP connections, UDP flows (one per 5-tuple) and ICMP echo flows.
	Connections    int64 `json:"connections"`
	TCPConnections int64 `json:"tcp_connections"`
	UDPFlows       int64 `json:"udp_flows"`
	ICMPFlows      int64 `json:"icmp_flows"`
	// HTTPConnections are the TCP connections to port 80.
	HTTPConnections int64 `json:"http_connections"`

	// HTTPRequests counts request messages; HTTPResponses counts response
	// messages including interim 1xx ones (HTTPInterim); HTTPTransactions
	// counts requests answered by a final (non-1xx) response. Requests a
	// server resets without answering are in HTTPRequests only.
	HTTPRequests     int64 `json:"http_requests"`
	HTTPResponses    int64 `json:"http_responses"`
	HTTPInterim      int64 `json:"http_interim_responses"`
	HTTPTransactions int64 `json:"http_transactions"`
	// HTTPRequestsWithGaps and HTTPResponsesWithGaps count the messages
	// that lost bytes to the capture (always inside a body). An analyzer
	// that resynchronises after a gap, as Zeek does, still counts them; one
	// that waits for every byte of a message, as tshark does, does not.
	HTTPRequestsWithGaps  int64            `json:"http_requests_with_gaps"`
	HTTPResponsesWithGaps int64            `json:"http_responses_with_gaps"`
	HTTPMethods           map[string]int64 `json:"http_methods"`
	HTTPStatus            map[string]int64 `json:"http_status"`
	// HTTPBytes is the application data each direction of the port-80
	// connections carried: the sequence space covered, counting every byte
	// once whether it was captured, retransmitted or lost (what Zeek's
	// orig_bytes and resp_bytes sum to).
	HTTPBytes DirBytes `json:"http_bytes"`

	// DNSQueries and DNSResponses count DNS messages (QR=0 / QR=1) over UDP
	// and TCP; DNSTCPMessages those over TCP. DNSTransactions counts
	// queries that got a response; DNSUnanswered queries that did not;
	// DNSTruncated responses with the TC bit (each followed by a retry of
	// the query over TCP).
	DNSQueries      int64            `json:"dns_queries"`
	DNSResponses    int64            `json:"dns_responses"`
	DNSTransactions int64            `json:"dns_transactions"`
	DNSUnanswered   int64            `json:"dns_unanswered"`
	DNSTruncated    int64            `json:"dns_truncated"`
	DNSTCPMessages  int64            `json:"dns_tcp_messages"`
	DNSRcodes       map[string]int64 `json:"dns_rcodes"`
	DNSQtypes       map[string]int64 `json:"dns_qtypes"`
	// DNSUDPBytes is the UDP payload each direction of the port-53 UDP
	// flows carried.
	DNSUDPBytes DirBytes `json:"dns_udp_bytes"`

	// TCPPort80Packets and UDPPort53Packets count the frames tcpdump's
	// "tcp port 80" and "udp port 53" match, looking inside VLAN tags too
	// (tcpdump needs "tcp port 80 or (vlan and tcp port 80)" for that): the
	// IP header's protocol field is the transport protocol, so IPv6
	// fragments never match, nor do IPv4 fragments other than the first.
	// Duplicated frames count twice.
	TCPPort80Packets int64 `json:"tcp_port_80_packets"`
	UDPPort53Packets int64 `json:"udp_port_53_packets"`

	// Gaps counts the holes that lost segments leave in the port-80 TCP
	// streams (adjacent lost segments make one hole); GapBytes their size.
	Gaps     int64 `json:"gaps"`
	GapBytes int64 `json:"gap_bytes"`
	// IPFragments counts frames that are IP fragments.
	IPFragments int64        `json:"ip_fragments"`
	Impairments ImpairCounts `json:"impairments"`

	firstTS, lastTS int64
}

// DirBytes holds a byte count per direction: Orig from the originator
// (client), Resp from the responder (server).
type DirBytes struct {
	Orig int64 `json:"orig"`
	Resp int64 `json:"resp"`
}

func (b *DirBytes) add(d, n int) {
	if d == dirC {
		b.Orig += int64(n)
	} else {
		b.Resp += int64(n)
	}
}

// ImpairCounts counts the impairments applied.
type ImpairCounts struct {
	Lost          int64 `json:"lost_segments"`
	Reordered     int64 `json:"reordered_segments"`
	Retransmitted int64 `json:"retransmitted_segments"`
	Duplicated    int64 `json:"duplicated_packets"`
	Fragmented    int64 `json:"fragmented_packets"`
}

func (t *Truth) init(cfg Config) {
	t.Version = TruthVersion
	t.Config = cfg
	t.HTTPMethods = map[string]int64{}
	t.HTTPStatus = map[string]int64{}
	t.DNSRcodes = map[string]int64{}
	t.DNSQtypes = map[string]int64{}
}

// finish computes the totals.
func (t *Truth) finish() {
	t.Connections = t.TCPConnections + t.UDPFlows + t.ICMPFlows
	t.DurationNS = t.lastTS - t.firstTS
}

// WriteFile writes t as indented JSON to path.
func (t *Truth) WriteFile(path string) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing truth file: %w", err)
	}
	return nil
}

// ReadTruth reads a truth file.
func ReadTruth(path string) (*Truth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &t, nil
}
