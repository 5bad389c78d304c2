package runner

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine describes the computer a run happened on.
type Machine struct {
	CPUModel string `json:"cpu_model"` // from /proc/cpuinfo; GOARCH when unknown
	Cores    int    `json:"cores"`     // logical CPUs usable by the runner
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Kernel   string `json:"kernel"` // e.g. "Linux 6.1.0-18-amd64"; empty when unknown
	// GoVersion is the Go version run-benchmark itself was built with;
	// each binary's own version is in its build settings.
	GoVersion string `json:"go_version"`
	// LoadAverage is the 1, 5 and 15 minute load average before the runs
	// (Linux); nil when unknown.
	LoadAverage []float64 `json:"load_average"`
}

// ReadMachine describes this computer.
func ReadMachine() Machine {
	m := Machine{
		CPUModel:  cpuModel("/proc/cpuinfo"),
		Cores:     runtime.NumCPU(),
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Kernel:    kernel(),
		GoVersion: runtime.Version(),
	}
	if m.CPUModel == "" {
		m.CPUModel = runtime.GOARCH
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if load, err := parseLoadAvg(string(data)); err == nil {
			m.LoadAverage = load[:]
		}
	}
	return m
}

// Load returns the load average as an array, zero when unknown.
func (m Machine) Load() (load [3]float64, ok bool) {
	if len(m.LoadAverage) != 3 {
		return load, false
	}
	return [3]float64(m.LoadAverage), true
}

// cpuModel reads the CPU's model name from a cpuinfo file, as Go's testing
// package does for its "cpu:" line.
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name", "Model", "cpu model", "Hardware":
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// BusyCores returns how many CPUs were busy, on average, over window: it
// reads the CPU times of a /proc/stat file before and after. The runner
// waits meanwhile, so the busy CPUs are other processes'. It returns -1
// when the file cannot be read (not Linux) or the clock did not advance.
func BusyCores(statPath string, window time.Duration) float64 {
	before, err := readCPUTimes(statPath)
	if err != nil {
		return -1
	}
	time.Sleep(window)
	after, err := readCPUTimes(statPath)
	if err != nil || after.total <= before.total {
		return -1
	}
	return float64(after.busy-before.busy) / float64(after.total-before.total) * float64(after.cpus)
}

// cpuTimes are the times of all CPUs together from /proc/stat, in clock
// ticks, and the number of CPUs.
type cpuTimes struct {
	busy, total uint64
	cpus        int
}

func readCPUTimes(path string) (cpuTimes, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return cpuTimes{}, err
	}
	return parseCPUTimes(string(data))
}

// parseCPUTimes reads the "cpu" line of /proc/stat (user, nice, system,
// idle, iowait, irq, softirq, steal; guest time is part of user) and
// counts the "cpuN" lines. Idle and iowait are idle; the rest is busy.
func parseCPUTimes(data string) (cpuTimes, error) {
	var t cpuTimes
	found := false
	for line := range strings.Lines(data) {
		name, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch {
		case name == "cpu":
			fields := strings.Fields(rest)
			if len(fields) < 4 {
				return t, fmt.Errorf("/proc/stat: cpu line %q: want at least 4 numbers", strings.TrimSpace(line))
			}
			for i, f := range fields[:min(len(fields), 8)] {
				v, err := strconv.ParseUint(f, 10, 64)
				if err != nil {
					return t, fmt.Errorf("/proc/stat: cpu line %q: %w", strings.TrimSpace(line), err)
				}
				t.total += v
				if i != 3 && i != 4 { // idle, iowait
					t.busy += v
				}
			}
			found = true
		case strings.HasPrefix(name, "cpu"):
			t.cpus++
		}
	}
	if !found || t.cpus == 0 {
		return t, fmt.Errorf("/proc/stat: no cpu lines")
	}
	return t, nil
}
