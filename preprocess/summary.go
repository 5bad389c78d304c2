package preprocess

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/shard"
)

// Summary describes a preprocessing run: what was read and what was
// written. Its JSON form (encoding/json) is what "run-benchmark preprocess
// --json" prints: an object whose keys are the fields' and, before
// "fragments", one per sub-trace named by the sub-trace ("http", "dns").
// Sizes are in bytes; MB are 10^6 bytes.
type Summary struct {
	Inputs []InputSummary `json:"inputs"`
	// Packets and Bytes are what was read from all inputs: Bytes counts
	// the capture data after decompression (file headers, record headers
	// and frames), which is the file size for uncompressed pcap input.
	Packets int64 `json:"packets"`
	Bytes   int64 `json:"bytes"`
	// Malformed counts packets whose headers the decoder found invalid;
	// they match no rule.
	Malformed int64 `json:"malformed"`
	// Shard is the shard written ("2/4"; empty: the whole trace), and
	// OtherShards counts the packets read that belong to other shards.
	Shard       string `json:"shard,omitempty"`
	OtherShards int64  `json:"other_shards,omitempty"`
	// Seconds is the wall-clock time of the run, MBPerSecond Bytes per
	// second of it.
	Seconds     float64 `json:"seconds"`
	MBPerSecond float64 `json:"mb_per_second"`

	// SubTraces describe the sub-traces, in the order of the rules.
	SubTraces []SubTraceSummary `json:"-"`
	// Fragments says what happened to IP fragments in the split.
	Fragments FragmentSummary `json:"fragments"`
	// Warnings are things the user should know about the outputs, one
	// sentence each.
	Warnings []string `json:"warnings"`
}

// InputSummary describes one input.
type InputSummary struct {
	Name     string `json:"name"`
	Format   string `json:"format"` // "pcap" or "pcapng"
	Gzip     bool   `json:"gzip"`
	LinkType uint16 `json:"link_type"` // of the file header (pcapng: of its first interface)
	Packets  int64  `json:"packets"`
	// Bytes is the capture data read, after decompression; Size the
	// input's size as given (the file size), 0 when unknown.
	Bytes int64 `json:"bytes"`
	Size  int64 `json:"size,omitempty"`
	// First and Last are the timestamps of the input's first and last
	// packet.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`

	firstTS, lastTS int64
}

// SubTraceSummary describes one sub-trace: its pcap file and its batch
// file, and what the flow engine did with its packets.
type SubTraceSummary struct {
	// Name is the sub-trace's (SubTrace.Name): its key in the JSON form.
	Name string `json:"-"`
	// Rule is the port rule in tcpdump's words, such as "tcp port 80".
	Rule string `json:"rule"`
	// Pcap and Batch are the files written (set by Run).
	Pcap  string `json:"pcap,omitempty"`
	Batch string `json:"batch,omitempty"`
	// Packets is the number of packets the rule matched: those in the
	// pcap file.
	Packets int64 `json:"packets"`

	// Connections is the number of connections in the batch file;
	// OtherConnections counts connections of another transport protocol
	// than the rule's, which are not recorded.
	Connections      int64 `json:"connections"`
	OtherConnections int64 `json:"other_connections"`
	// DataRecords and DataBytes count the @data records and their bytes;
	// Gaps and GapBytes the @gap records and the bytes they say are
	// missing.
	DataRecords int64 `json:"data_records"`
	DataBytes   int64 `json:"data_bytes"`
	Gaps        int64 `json:"gaps"`
	GapBytes    int64 `json:"gap_bytes"`
	// Dropped counts packets the flow engine ignored (they are in the
	// pcap file, their bytes are not in the batch file), DroppedBy by
	// reason: "not-ip", "truncated", "protocol", "checksum", "fragment".
	Dropped   int64            `json:"dropped"`
	DroppedBy map[string]int64 `json:"dropped_by,omitempty"`

	// Retransmissions counts TCP segments carrying only bytes already
	// seen, Inconsistent those whose bytes differed from the first copy
	// (which wins).
	Retransmissions int64 `json:"retransmissions"`
	Inconsistent    int64 `json:"inconsistent"`
	// FlowCapHits and GlobalCapHits count holes forced by the engine's
	// reassembly buffer caps; Evictions connections ended early because
	// the connection table was full.
	FlowCapHits   int64 `json:"flow_cap_hits"`
	GlobalCapHits int64 `json:"global_cap_hits"`
	Evictions     int64 `json:"evictions"`
	// MemoryEvictions counts the evictions the memory budget forced (also
	// in Evictions); FragCapHits the fragmented datagrams given up because
	// the fragment caps were reached.
	MemoryEvictions int64 `json:"memory_evictions"`
	FragCapHits     int64 `json:"frag_cap_hits"`
	// PeakMemory is the most memory the engine counted against its budget
	// at once (connections, out-of-order segments, fragments).
	PeakMemory int64 `json:"peak_memory"`
	// PeakBuffered is the most memory the engine's out-of-order segments
	// held at once (buffers and bookkeeping, as the caps count it).
	PeakBuffered int64 `json:"peak_buffered"`
	// FragsReassembled counts IP datagrams rebuilt from fragments.
	FragsReassembled int64 `json:"frags_reassembled"`
}

// FragmentSummary says what the split did with IP fragments (see
// Classifier).
type FragmentSummary struct {
	// Matched counts non-first fragments that followed their first
	// fragment into a sub-trace; Other those of datagrams that matched no
	// rule; Unmatched those whose first fragment was not seen (left out);
	// Forgotten datagrams forgotten early because the fragment table was
	// full.
	Matched   int64 `json:"matched"`
	Other     int64 `json:"other"`
	Unmatched int64 `json:"unmatched"`
	Forgotten int64 `json:"forgotten"`
}

// summarize fills the Summary from the counters of the pipeline.
func (pr *processor) summarize() {
	s := &pr.sum
	if s.Warnings == nil {
		s.Warnings = []string{} // [] rather than null in JSON
	}
	for i, src := range pr.srcs {
		in := &s.Inputs[i]
		in.Name = src.Name
		in.Format = src.r.Format().String()
		in.Gzip = src.r.Compressed()
		in.LinkType = src.r.LinkType()
		in.Size = src.Size
		if i <= pr.last {
			in.Bytes = src.r.Offset()
		}
		s.Bytes += in.Bytes
		if in.Packets > 0 {
			in.First, in.Last = time.Unix(0, in.firstTS).UTC(), time.Unix(0, in.lastTS).UTC()
		}
	}
	elapsed := time.Since(pr.start)
	s.Seconds = elapsed.Seconds()
	if s.Seconds > 0 {
		s.MBPerSecond = float64(s.Bytes) / 1e6 / s.Seconds
	}
	st := pr.split.Stats()
	s.SubTraces = make([]SubTraceSummary, len(pr.cfg.Rules.SubTraces))
	for i, r := range pr.cfg.Rules.SubTraces {
		s.SubTraces[i] = SubTraceSummary{Name: r.Name, Rule: portRule(r.TransportName(), r.Ports), Packets: st.SubTraces[i]}
	}
	s.Fragments = FragmentSummary{Matched: st.FragsMatched, Other: st.FragsOther, Unmatched: st.FragsUnmatched, Forgotten: st.FragsForgotten}
	if st.FragsForgotten > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("the fragment table was full %d times: non-first fragments of those datagrams may be missing from the sub-traces", st.FragsForgotten))
	}
	for i := range s.SubTraces {
		sum, sub := &s.SubTraces[i], &pr.subs[0][i]
		if sub.eng != nil {
			summarize(sum, pr.subs, i)
			s.Warnings = append(s.Warnings, sub.warnings(sum)...)
		}
	}
}

// summarize sums up sub-trace i over the workers.
func summarize(s *SubTraceSummary, workers [][]subTrace, i int) {
	var es flow.Stats
	var rs RecorderStats
	for _, subs := range workers {
		sub := &subs[i]
		wes, wrs := sub.eng.Stats(), sub.rec.Stats()
		shard.Sum(&es, &wes)
		shard.Sum(&rs, &wrs)
		s.OtherConnections += sub.filter.skipped
	}
	s.Connections = rs.Conns
	s.DataRecords, s.DataBytes = rs.Data, rs.Bytes
	s.Gaps, s.GapBytes = rs.Gaps, rs.GapBytes
	s.Dropped = es.DroppedTotal()
	for r, n := range es.Dropped {
		if n > 0 {
			if s.DroppedBy == nil {
				s.DroppedBy = map[string]int64{}
			}
			s.DroppedBy[flow.DropReason(r).String()] = n
		}
	}
	s.Retransmissions, s.Inconsistent = es.Retransmissions, es.Inconsistent
	s.FlowCapHits, s.GlobalCapHits, s.Evictions = es.FlowCapHits, es.GlobalCapHits, es.Evictions
	s.PeakBuffered = es.PeakBuffered
	s.MemoryEvictions, s.FragCapHits, s.PeakMemory = es.MemoryEvictions, es.FragCapHits, es.PeakMemory
	s.FragsReassembled = es.FragsReassembled
}

func (sub *subTrace) warnings(s *SubTraceSummary) []string {
	var w []string
	if n := s.FlowCapHits + s.GlobalCapHits; n > 0 {
		w = append(w, fmt.Sprintf("%s: the reassembly buffer caps forced %d gaps (out-of-order data beyond the caps was given up)", sub.name, n))
	}
	if s.Evictions > 0 {
		w = append(w, fmt.Sprintf("%s: the connection table was full: %d connections were ended early (%d by the memory budget, --max-memory)", sub.name, s.Evictions, s.MemoryEvictions))
	}
	if s.FragCapHits > 0 {
		w = append(w, fmt.Sprintf("%s: the fragment caps were reached: %d fragmented datagrams were given up", sub.name, s.FragCapHits))
	}
	if s.OtherConnections > 0 {
		w = append(w, fmt.Sprintf("%s: %d connections of another transport protocol than the rule's were not recorded", sub.name, s.OtherConnections))
	}
	return w
}

// portRule says a port list in tcpdump's words: "tcp port 80", "udp
// ports 53,5353".
func portRule(proto string, ports []uint16) string {
	switch len(ports) {
	case 0:
		return "no " + proto + " ports"
	case 1:
		return fmt.Sprintf("%s port %d", proto, ports[0])
	}
	return proto + " ports " + FormatPorts(ports)
}

// FormatPorts writes a port list the way ParsePorts reads it, with runs of
// consecutive ports as ranges: "80,8000-8080".
func FormatPorts(ports []uint16) string {
	var b strings.Builder
	for i := 0; i < len(ports); {
		j := i
		for j+1 < len(ports) && int(ports[j+1]) == int(ports[j])+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(ports[i])))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(ports[j])))
		}
		i = j + 1
	}
	return b.String()
}

// SubTrace returns the summary of the sub-trace called name, nil when there
// is none.
func (s *Summary) SubTrace(name string) *SubTraceSummary {
	for i := range s.SubTraces {
		if s.SubTraces[i].Name == name {
			return &s.SubTraces[i]
		}
	}
	return nil
}

// summaryFields is a Summary without its methods: its JSON form has every
// key but the sub-traces'.
type summaryFields Summary

// subTracesBefore is the key the sub-traces' keys come before.
const subTracesBefore = "fragments"

// MarshalJSON writes the summary's fields with one key per sub-trace, its
// name, before "fragments".
func (s Summary) MarshalJSON() ([]byte, error) {
	fields, err := json.Marshal(summaryFields(s))
	if err != nil {
		return nil, err
	}
	at, err := keyOffset(fields, subTracesBefore)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(fields[:at])
	for _, sub := range s.SubTraces {
		v, err := json.Marshal(sub)
		if err != nil {
			return nil, err
		}
		key, _ := json.Marshal(sub.Name)
		b.WriteByte(',')
		b.Write(key)
		b.WriteByte(':')
		b.Write(v)
	}
	b.Write(fields[at:])
	return b.Bytes(), nil
}

// keyOffset returns the offset in the JSON object obj of the comma before
// the top-level key, which must not be the first.
func keyOffset(obj []byte, key string) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return 0, err
	}
	for dec.More() {
		at := int(dec.InputOffset())
		t, err := dec.Token()
		if err != nil {
			return 0, err
		}
		if t == key {
			return at, nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("summary: no %q key", key)
}

// UnmarshalJSON reads what MarshalJSON writes: keys with an object value
// that are not fields of Summary are sub-traces, in order.
func (s *Summary) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, (*summaryFields)(s)); err != nil {
		return err
	}
	fields := summaryKeys()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return err
	}
	s.SubTraces = nil
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if fields[key] || !bytes.HasPrefix(v, []byte("{")) {
			continue // a field, or a key of a later version
		}
		sub := SubTraceSummary{Name: key}
		if err := json.Unmarshal(v, &sub); err != nil {
			return fmt.Errorf("summary of the %s sub-trace: %w", key, err)
		}
		s.SubTraces = append(s.SubTraces, sub)
	}
	return nil
}

// summaryKeys returns the keys of the JSON form of a Summary that are not
// sub-traces', and "error", which "run-benchmark preprocess --json" adds.
func summaryKeys() map[string]bool {
	keys := map[string]bool{"error": true}
	t := reflect.TypeFor[summaryFields]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}

// WriteText writes the summary for people: what was read and how fast,
// then a line per output file, then the warnings.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	traces := "1 trace"
	if len(s.Inputs) != 1 {
		traces = fmt.Sprintf("%d traces", len(s.Inputs))
	}
	fmt.Fprintf(&b, "read %s: %s, %s in %.2f s (%.1f MB/s)\n",
		traces, plural(s.Packets, "packet"), size(s.Bytes), s.Seconds, s.MBPerSecond)
	if s.Shard != "" {
		fmt.Fprintf(&b, "shard %s: %s of other shards left out\n", s.Shard, plural(s.OtherShards, "packet"))
	}
	var names []string // pcap and batch file of each sub-trace
	for _, sub := range s.SubTraces {
		names = append(names, cmp.Or(sub.Pcap, PcapFile(sub.Name)), cmp.Or(sub.Batch, BatchFile(sub.Name)))
	}
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for i := range s.SubTraces {
		sub := &s.SubTraces[i]
		fmt.Fprintf(&b, "%-*s  %s (%s)\n", width, names[2*i], plural(sub.Packets, "packet"), sub.Rule)
		fmt.Fprintf(&b, "%-*s  %s\n", width, names[2*i+1], sub.batchLine())
	}
	if s.Malformed > 0 {
		fmt.Fprintf(&b, "%s had invalid headers and matched no rule\n", plural(s.Malformed, "packet"))
	}
	if f := s.Fragments; f.Matched+f.Other+f.Unmatched > 0 {
		fmt.Fprintf(&b, "IP fragments: %s followed their first fragment into a sub-trace, %s belong to other traffic, %s came without their first fragment and were left out\n",
			count(f.Matched), count(f.Other), count(f.Unmatched))
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// batchLine describes a batch file: "12 connections, 3.4 MB of data, 2
// gaps (1,460 bytes missing), 5 packets dropped (truncated 5)".
func (s *SubTraceSummary) batchLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s of data, ", plural(s.Connections, "connection"), size(s.DataBytes))
	if s.Gaps == 0 {
		b.WriteString("no gaps, ")
	} else {
		fmt.Fprintf(&b, "%s (%s bytes missing), ", plural(s.Gaps, "gap"), count(s.GapBytes))
	}
	if s.Dropped == 0 {
		b.WriteString("no packets dropped")
		return b.String()
	}
	fmt.Fprintf(&b, "%s dropped (", plural(s.Dropped, "packet"))
	first := true
	for r := range flow.NumDropReasons {
		if n := s.DroppedBy[r.String()]; n > 0 {
			if !first {
				b.WriteString(", ")
			}
			first = false
			fmt.Fprintf(&b, "%s %s", r, count(n))
		}
	}
	b.WriteByte(')')
	return b.String()
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return count(n) + " " + what + "s"
}

// count writes n with thousands separators: 1,234,567.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

// size writes a byte count with a decimal unit: 512 bytes, 1.5 kB, 404.2 MB.
func size(n int64) string {
	switch {
	case n < 1000:
		return plural(n, "byte")
	case n < 1e6:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}

// Progress is how far a run got, for Config.Progress.
type Progress struct {
	// Input is the name of the input being read, Index its position
	// (from 0) among Inputs.
	Input         string
	Index, Inputs int
	// Packets and Bytes were read so far (Bytes as in Summary.Bytes).
	Packets, Bytes int64
	// Read is how many bytes of the inputs as given (compressed or not)
	// were read, Size their total size, 0 when unknown.
	Read, Size int64
	Elapsed    time.Duration
	// Done is set in the last call, after the outputs were closed.
	Done bool
}

// Fraction returns the part of the input read so far, from 0 to 1, when
// the input size is known.
func (p Progress) Fraction() (float64, bool) {
	if p.Size <= 0 {
		return 0, false
	}
	return min(float64(p.Read)/float64(p.Size), 1), true
}

// MBPerSecond is the throughput so far.
func (p Progress) MBPerSecond() float64 {
	if s := p.Elapsed.Seconds(); s > 0 {
		return float64(p.Bytes) / 1e6 / s
	}
	return 0
}

// String writes the progress on one line: "1,234,567 packets  404.2 MB
// 266.0 MB/s  45%", followed by the input's name when there are several.
func (p Progress) String() string {
	s := fmt.Sprintf("%s  %s  %.1f MB/s", plural(p.Packets, "packet"), size(p.Bytes), p.MBPerSecond())
	if f, ok := p.Fraction(); ok {
		s += fmt.Sprintf("  %d%%", int(f*100))
	}
	if p.Inputs > 1 {
		s += fmt.Sprintf("  [%d/%d %s]", p.Index+1, p.Inputs, p.Input)
	}
	return s
}
