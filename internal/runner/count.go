package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Count is the number of records of one log file.
type Count struct {
	Log     string // file name, e.g. "http.log"
	Records int    // lines that are not empty and do not start with '#'
	Present bool   // false when the file does not exist (shown as <n/a>)
}

// CountRecords returns the number of records in a log: lines that are not
// empty and do not start with '#'. That counts Zeek TSV logs (whose header
// and footer lines start with '#'), Zeek JSON logs (one object per line)
// and tshark's field output alike.
func CountRecords(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	atStart := true
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if atStart && line[0] != '#' && line[0] != '\n' && !(line[0] == '\r' && len(line) > 1 && line[1] == '\n') {
				n++
			}
			atStart = line[len(line)-1] == '\n'
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return n, nil
		default:
			return n, err
		}
	}
}

// countLogs counts the records of the logs a variant left in its log
// directory: the expected logs first, in order (absent ones as not
// present), then any other *.log file that holds records, by name.
func countLogs(v Variant) ([]Count, error) {
	if v.EveTypes != nil {
		return countEve(filepath.Join(v.LogDir, eveLog), v.EveTypes)
	}
	var counts []Count
	for _, name := range v.Logs {
		c, err := countFile(filepath.Join(v.LogDir, name))
		if err != nil {
			return counts, err
		}
		counts = append(counts, c)
	}
	extra, err := filepath.Glob(filepath.Join(v.LogDir, "*.log"))
	if err != nil {
		return counts, err
	}
	slices.Sort(extra)
	for _, path := range extra {
		if slices.Contains(v.Logs, filepath.Base(path)) {
			continue
		}
		c, err := countFile(path)
		if err != nil {
			return counts, err
		}
		if c.Records > 0 {
			counts = append(counts, c)
		}
	}
	return counts, nil
}

func countFile(path string) (Count, error) {
	c := Count{Log: filepath.Base(path)}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	defer f.Close()
	c.Present = true
	c.Records, err = CountRecords(f)
	return c, err
}

// String renders a count as the table does: "http.log=4833" or
// "http.log=<n/a>".
func (c Count) String() string {
	if !c.Present {
		return c.Log + "=<n/a>"
	}
	return c.Log + "=" + strconv.Itoa(c.Records)
}

// eveLog is the file Suricata writes its events to.
const eveLog = "eve.json"

// countEve counts the lines of a Suricata eve.json, one JSON object each,
// whose event_type is one of types, as counts named eve.json:TYPE.
func countEve(path string, types []string) ([]Count, error) {
	counts := make([]Count, len(types))
	for i, t := range types {
		counts[i] = Count{Log: eveLog + ":" + t}
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return counts, nil
	}
	if err != nil {
		return counts, err
	}
	defer f.Close()
	for i := range counts {
		counts[i].Present = true
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev struct {
			EventType string `json:"event_type"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return counts, fmt.Errorf("%s:%d: want a JSON object with an event_type: %v", path, n, err)
		}
		if i := slices.Index(types, ev.EventType); i >= 0 {
			counts[i].Records++
		}
	}
	if err := sc.Err(); err != nil {
		return counts, fmt.Errorf("%s: %w", path, err)
	}
	return counts, nil
}
