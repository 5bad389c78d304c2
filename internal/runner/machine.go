package runner

import (
	"bufio"
	"os"
	"runtime"
	"strings"
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
