// Package runner builds the benchmark's binaries, runs its variants, and
// reports what they cost: the engine behind "run-benchmark build", "run"
// and "profile".
//
// # Building
//
// Build compiles Targets (by default http-, dns- and analyze-, each
// -static and -opt) from the source tree into the work directory.
// Static is CGO_ENABLED=0 go build -trimpath -pgo=off: symbols stay in (perf
// and pprof need them) and Go keeps frame pointers on amd64. Opt adds
// profile-guided optimisation with the default.pgo committed next to each
// main package, and GOAMD64=v3 when the CPU has every feature the Go
// runtime checks for v3 (ChooseGOAMD64). GeneratePGO remakes those
// default.pgo files from CPU profiles of the static binaries on the user's
// own data: one profile, merged from every binary's runs, written to each
// package. Build then passes it as one -pgo=FILE, which compiles the
// packages the binaries share once; -pgo=auto, used when the files differ,
// compiles them once per binary.
//
// With BuildConfig.Variants, Build also builds the Go entries of a
// variants file: for each, a module generated in a scratch directory whose
// mains link the entry's package (which registers an implementation
// through the public API) into replay.Main and the analyzer
// (internal/analyzecmd), built with the same flags, profiles and GOAMD64.
//
// # Running
//
// Variants lists what a run times, per protocol P: the replay binaries on
// spicy-P.dat (P-static, P-opt, P-static-std), the analyzer on spicy-P.pcap
// (P-analyze, P-analyze-opt, P-analyze-std) and tshark on the same pcap
// (P-tshark). These rows are data, the embedded variants file
// (DefaultVariants); VariantConfig.File adds a user's (VariantsFile
// documents every key): Go entries, and programs from command templates
// whose records are counted from Zeek's TSV or JSON logs, Suricata's
// eve.json or standard output. Check drops the variants whose program or input is missing
// and warns about them, about debug builds (-race, -gcflags=-N -l, -cover)
// and about binaries older than the source. RunAll runs each variant
// (a calibration run when RunConfig.MinTime asks for runs of several
// executions, warm-up runs, then timed runs, then for replay binaries one
// untimed run that writes the logs to count), one variant after the
// other or round-robin (RunConfig.Interleave), and prints Spicy's table:
//
//	http-static  1.58        1.54        1.56          http.log=4833
//
// Every time comes from the child's rusage as the kernel reports it when
// the runner reaps the child (Exec): user and system CPU time and peak
// RSS. Nothing is parsed from the child's output for timing; a child's
// own "# user_time=..." line is kept as reported data only. Children may
// be pinned to one CPU (--cpu): the runner forks them from an OS thread
// whose affinity it narrowed first, so no helper process is measured.
//
// Each variant leaves in the output directory NAME.cmd (its command
// lines), NAME.stdout and NAME.stderr of its last run, NAME.failed.stderr
// of its last failed run, and NAME/ with the logs of its last logging
// run. Log counts are records: lines that are not empty and do not start
// with '#'.
//
// # Reporting
//
// Statistics compares each variant with the reference variant of its
// protocol (ratio, 95 % interval and U test, from package stats), and
// WriteStatistics prints it after the table; StatWarnings warns about
// runs too short for the clock (MinResolvedTime) and outlying runs.
// CompareLogs compares each variant's logs with the reference variant's,
// or with another tool's logs, record by record and field by field
// (package logdiff), writes each variant's comparisons to NAME.diff, and
// WriteAgreement prints them after the statistics. Results are also
// written as a JSON report (Report, schema ReportSchema, documented field
// by field on its types), as Go benchmark lines for benchstat
// (WriteGoBench), as Markdown (WriteMarkdown) and as an SVG chart on a log
// scale (WriteSVG). CountMismatches warns when variants of one protocol
// disagree on a log's records, CheckBusy when the machine is busy (a high
// load average that a sample of the CPUs confirms).
//
// # Comparing builds
//
// RunComparison runs the variants of two builds round-robin, Changes
// compares them variant by variant and WriteChanges prints the result;
// Change.Regressed is the gate of "run-benchmark compare". ExportRevision
// writes a git revision of the source tree into a directory to build it.
//
// # Profiling
//
// Profile runs one variant with its --cpuprofile flag until its runs have
// used enough CPU time for a few hundred samples, merges their profiles
// and prints the top functions with go tool pprof.
package runner
