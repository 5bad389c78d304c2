package flow

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
)

// readConnLog reads the records of a Zeek TSV conn.log.
func readConnLog(t *testing.T, path string) []map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := corpustest.ReadLog(data)
	return recs
}

// zeekDifferences lists the conn.log fields where the engine knowingly
// differs from a Zeek baseline, per trace and connection, with the reason.
var zeekDifferences = map[string]string{}

// TestZeekConnLog compares the engine's view of every connection with the
// conn.log of Zeek's own test baselines for the corpus traces: conn_state,
// history, byte, packet and missed-byte counts.
func TestZeekConnLog(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	dir := c.Dir
	compared := 0
	for _, e := range c.Entries {
		logPath := filepath.Join(dir, "baselines", e.Test, "conn.log")
		if e.Test == "" {
			continue
		}
		if _, err := os.Stat(logPath); err != nil {
			continue
		}
		t.Run(e.Path, func(t *testing.T) {
			zeek := readConnLog(t, logPath)
			r := newRecorder(t)
			// Zeek verifies checksums unless run with -C.
			verify := !strings.Contains(e.Cmd, " -C") && !strings.Contains(e.Cmd, " -Cr")
			eng := New(Config{VerifyChecksums: verify}, r)
			for _, p := range readTrace(t, filepath.Join(dir, e.Path)) {
				eng.Packet(p)
			}
			eng.Flush()
			used := map[*connRecord]bool{}
			for _, z := range zeek {
				if z["tunnel_parents"] != "-" && z["tunnel_parents"] != "" && z["tunnel_parents"] != "(empty)" {
					continue // inside a tunnel: the engine does not decapsulate
				}
				c := matchConn(r, z, used)
				if c == nil {
					t.Errorf("Zeek has connection %v, the engine does not", z)
					continue
				}
				used[c] = true
				id := connID(c.key)
				compared++
				got := map[string]string{
					"conn_state":    c.state,
					"history":       c.history,
					"missed_bytes":  strconv.FormatInt(c.stats[Orig].Missed+c.stats[Resp].Missed, 10),
					"orig_pkts":     strconv.FormatInt(c.stats[Orig].Packets, 10),
					"resp_pkts":     strconv.FormatInt(c.stats[Resp].Packets, 10),
					"orig_ip_bytes": strconv.FormatInt(c.stats[Orig].IPBytes, 10),
					"resp_ip_bytes": strconv.FormatInt(c.stats[Resp].IPBytes, 10),
					"orig_bytes":    strconv.FormatInt(c.stats[Orig].Bytes, 10),
					"resp_bytes":    strconv.FormatInt(c.stats[Resp].Bytes, 10),
				}
				if z["history"] == "-" && c.history == "" {
					got["history"] = "-"
				}
				// 'X' and 'x' mark analyzers that hit a limit: protocol
				// analysis, not the engine's business.
				z["history"] = strings.NewReplacer("X", "", "x", "").Replace(z["history"])
				for _, f := range []string{"conn_state", "history", "missed_bytes", "orig_pkts", "resp_pkts",
					"orig_ip_bytes", "resp_ip_bytes", "orig_bytes", "resp_bytes"} {
					want, ok := z[f]
					if !ok || want == "-" && (f == "orig_bytes" || f == "resp_bytes") {
						continue // not logged (zero duration)
					}
					if got[f] != want {
						if why, ok := zeekDifferences[e.Path+" "+id+" "+f]; ok {
							t.Logf("%s %s: %s, Zeek %s: %s", id, f, got[f], want, why)
							continue
						}
						t.Errorf("%s %s = %s, Zeek %s", id, f, got[f], want)
					}
				}
			}
		})
	}
	t.Logf("compared %d connections with Zeek", compared)
	if compared == 0 {
		t.Error("no connection of a conn.log baseline compared: the baselines were not read")
	}
}

func connID(k Key) string {
	proto := map[uint8]string{ProtoTCP: "tcp", ProtoUDP: "udp", ProtoICMP: "icmp", ProtoICMPv6: "icmp"}[k.Proto]
	return fmt.Sprintf("%s:%d>%s:%d/%s", addrString(k.Orig.Addr()), k.Orig.Port(), addrString(k.Resp.Addr()), k.Resp.Port(), proto)
}

func addrString(a netip.Addr) string { return a.Unmap().String() }

// matchConn finds the engine's connection for a Zeek record: the first
// unused one, in start order, whose 5-tuple agrees with the record's id
// fields (projections may leave some out).
func matchConn(r *recorder, z map[string]string, used map[*connRecord]bool) *connRecord {
	for _, id := range r.order {
		c := r.conns[id]
		if used[c] {
			continue
		}
		id := connID(c.key) // "orig_h:orig_p>resp_h:resp_p/proto"
		oh, op := addrString(c.key.Orig.Addr()), strconv.Itoa(int(c.key.Orig.Port()))
		rh, rp := addrString(c.key.Resp.Addr()), strconv.Itoa(int(c.key.Resp.Port()))
		proto := id[strings.LastIndexByte(id, '/')+1:]
		ok := true
		for f, v := range map[string]string{"id.orig_h": oh, "id.orig_p": op, "id.resp_h": rh, "id.resp_p": rp, "proto": proto} {
			if zv, present := z[f]; present && zv != v {
				ok = false
			}
		}
		if ok {
			return c
		}
	}
	return nil
}
