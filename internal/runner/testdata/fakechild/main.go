// Command fakechild stands in for the programs the runner starts, so the
// runner's tests need neither the real binaries nor benchmark data. It
// takes its role from the name it is called by (tests link or copy it):
//
//	http-static, http-opt, dns-static, dns-opt  a replay binary (-U, -F, --parsers, --log-dir, --cpuprofile)
//	analyze-static, analyze-opt                 the analyzer (-r, -o, --parsers, --cpuprofile)
//	tshark                                      tshark printing one frame number per line
//	fakechild burn|sleep|affinity|rss ARG       measurement helpers
//
// Its inputs are small text files of "key=N" lines saying how many log
// records to write: native, std (per parser set), conn (conn.log) and
// tshark. The environment variable FAKECHILD_FAIL lists names (comma
// separated) that fail with exit status 1, printing an error and, with -U,
// the resource line after it; FAKECHILD_BURN is the CPU time
// every role burns (default 20ms).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/profile"
)

func main() {
	name := filepath.Base(os.Args[0])
	if slices.Contains(strings.Split(os.Getenv("FAKECHILD_FAIL"), ","), name) {
		fmt.Fprintf(os.Stderr, "%s: failing as asked by FAKECHILD_FAIL\n", name)
		if slices.Contains(os.Args, "-U") {
			// As the replay binaries do: the resource line comes last, after the error.
			fmt.Fprintln(os.Stderr, "# user_time=0.001000 sys_time=0.000000 memory=0 bytes=0 transactions=0")
		}
		os.Exit(1)
	}
	var err error
	switch {
	case name == "tshark":
		err = tshark(os.Args[1:])
	case strings.HasPrefix(name, "analyze"):
		err = analyze(os.Args[1:])
	case strings.HasPrefix(name, "http-"), strings.HasPrefix(name, "dns-"):
		err = replay(strings.SplitN(name, "-", 2)[0], os.Args[1:])
	case len(os.Args) == 3:
		err = helper(os.Args[1], os.Args[2])
	default:
		err = fmt.Errorf("unknown role %q", name)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

func replay(proto string, args []string) error {
	fs := flag.NewFlagSet(proto, flag.ContinueOnError)
	usage := fs.Bool("U", false, "print resource usage")
	input := fs.String("F", "", "batch file")
	parsers := fs.String("parsers", "native", "parser set")
	logDir := fs.String("log-dir", "", "log directory")
	profile := fs.String("cpuprofile", "", "CPU profile")
	if err := fs.Parse(args); err != nil {
		os.Exit(2)
	}
	keys, err := work(*input, *profile)
	if err != nil {
		return err
	}
	n := keys[*parsers]
	if *logDir != "" {
		if err := writeLog(filepath.Join(*logDir, proto+".log"), proto, n); err != nil {
			return err
		}
	}
	if *usage {
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		fi, _ := os.Stat(*input)
		fmt.Fprintf(os.Stderr, "# user_time=%.6f sys_time=%.6f memory=%d bytes=%d transactions=%d\n",
			float64(ru.Utime.Nano())/1e9, float64(ru.Stime.Nano())/1e9, ru.Maxrss*1024, fi.Size(), n)
	}
	return nil
}

func analyze(args []string) error {
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	input := fs.String("r", "", "pcap")
	out := fs.String("o", "", "log directory")
	parsers := fs.String("parsers", "native", "parser set")
	profile := fs.String("cpuprofile", "", "CPU profile")
	fs.String("protocols", "http,dns", "protocols to log")
	if err := fs.Parse(args); err != nil {
		os.Exit(2)
	}
	keys, err := work(*input, *profile)
	if err != nil {
		return err
	}
	proto := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(*input), "spicy-"), ".pcap")
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := writeLog(filepath.Join(*out, "conn.log"), "conn", keys["conn"]); err != nil {
		return err
	}
	return writeLog(filepath.Join(*out, proto+".log"), proto, keys[*parsers])
}

func tshark(args []string) error {
	var input string
	for i, a := range args {
		if a == "-r" && i+1 < len(args) {
			input = args[i+1]
		}
	}
	keys, err := readKeys(input)
	if err != nil {
		return err
	}
	burnDefault()
	w := bufio.NewWriter(os.Stdout)
	for i := range keys["tshark"] {
		fmt.Fprintln(w, 3*i+1)
	}
	return w.Flush()
}

func helper(what, arg string) error {
	switch what {
	case "burn":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return err
		}
		fmt.Println(burn(d).Nanoseconds())
	case "sleep":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return err
		}
		time.Sleep(d)
	case "affinity":
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil {
			return err
		}
		var cpus []string
		for i := range 1024 {
			if set.IsSet(i) {
				cpus = append(cpus, strconv.Itoa(i))
			}
		}
		fmt.Println(strings.Join(cpus, ","))
	case "rss":
		mb, err := strconv.Atoi(arg)
		if err != nil {
			return err
		}
		buf := make([]byte, mb<<20)
		for i := 0; i < len(buf); i += 4096 {
			buf[i] = 1
		}
		fmt.Println(len(buf))
	default:
		return fmt.Errorf("unknown helper %q", what)
	}
	return nil
}

// burn spins until this process has used d of user CPU time, as measured
// by the kernel, and returns the user time it measured last.
func burn(d time.Duration) time.Duration {
	x := uint64(1)
	for {
		for range 100000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		if u := time.Duration(ru.Utime.Nano()); u >= d {
			if x == 42 { // keeps the loop from being optimised away
				fmt.Fprintln(os.Stderr, x)
			}
			return u
		}
	}
}

func burnDefault() {
	d := 20 * time.Millisecond
	if s := os.Getenv("FAKECHILD_BURN"); s != "" {
		d, _ = time.ParseDuration(s)
	}
	burn(d)
}

// work reads the key file input and burns the CPU time of a run, under a
// CPU profile written to profileFile when that is set.
func work(input, profileFile string) (map[string]int, error) {
	keys, err := readKeys(input)
	if err != nil {
		return nil, err
	}
	stop, err := profile.StartCPU(profileFile)
	if err != nil {
		return nil, err
	}
	burnDefault()
	return keys, stop()
}

func readKeys(file string) (map[string]int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	keys := map[string]int{}
	for _, f := range strings.Fields(string(data)) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("%s: want key=N, got %q", file, f)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		keys[k] = n
	}
	return keys, nil
}

func writeLog(file, path string, n int) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "#separator \\x09\n#path\t%s\n#fields\tts\tuid\n#types\ttime\tstring\n", path)
	for i := range n {
		fmt.Fprintf(w, "%d.000000\tC%d\n", 1700000000+i, i)
	}
	fmt.Fprintf(w, "#close\t2026-11-29-12-00-01\n")
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
