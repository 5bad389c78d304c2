package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/wirebench/wirebench/internal/shard"
)

const mergeAbout = `
Merge the outputs of the shards of one trace, each written by "analyze
--shard K/N -o SHARD_DIR" or "run-benchmark preprocess --shard K/N -o
SHARD_DIR", into DIR, as one run over the whole trace would have written
them. Every file of the first SHARD_DIR is merged with the files of the
same name in the others, which must all have it:

  *.log   Zeek logs (conn.log, http.log, dns.log): in the TSV layout one
          header (the shards' #fields and #types must agree), the records
          of every shard, and the latest #close; JSON lines are
          concatenated
  *.dat   batch files: one header line, then every shard's records
  *.pcap  pcap files: the packets of all shards in timestamp order, as
          mergecap writes them

The shards of a trace hold disjoint sets of connections, so the merged
logs hold the records of one run, in another order (sort them to
compare: "run-benchmark diff" does), and the merged batch files the same
connections with the same records. Files of other names are left out.

Exit status: 0 on success, 1 when a file cannot be read or written or
is not a shard of the same output (the error names it), 2 on a usage
error.

Examples:
  for k in 1 2 3 4; do analyze --shard $k/4 -r trace.pcap -o shard$k & done; wait
  run-benchmark merge -o logs shard1 shard2 shard3 shard4
  parallel analyze --shard {}/8 -r trace.pcap -o shard{} ::: 1 2 3 4 5 6 7 8
  run-benchmark merge -o logs shard?
`

func runMerge(g *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("merge", "SHARD_DIR...", mergeAbout, stdout, stderr)
	out := fs.StringP("output", "o", "", "write the merged files into `DIR` (created if needed; required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dirs := fs.Args()
	if *out == "" || len(dirs) == 0 {
		return fmt.Errorf("%w: want -o DIR and at least one SHARD_DIR (see --help)", errUsage)
	}
	for _, d := range dirs {
		if abs(d) == abs(*out) {
			return fmt.Errorf("%w: -o %s is one of the shard directories: the merge would overwrite its input", errUsage, *out)
		}
	}
	names, err := mergeable(dirs[0])
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("%s holds no .log, .dat or .pcap file to merge", dirs[0])
	}
	if err := os.MkdirAll(*out, 0o777); err != nil {
		return err
	}
	for _, name := range names {
		if err := mergeFile(*out, name, dirs); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: merged from %d shards\n", filepath.Join(*out, name), len(dirs))
	}
	return nil
}

func abs(path string) string {
	a, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return a
}

// mergeable lists the files of dir that merge knows.
func mergeable(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && slices.Contains([]string{".log", ".dat", ".pcap"}, filepath.Ext(e.Name())) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// mergeFile merges the file name of every shard directory into out.
func mergeFile(out, name string, dirs []string) (err error) {
	var inputs []shard.Input
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, name))
		if err != nil {
			return fmt.Errorf("%w (every shard directory must hold the files of the first, %s)", err, dirs[0])
		}
		defer f.Close()
		inputs = append(inputs, shard.Input{Name: f.Name(), R: f})
	}
	path := filepath.Join(out, name)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path) // leave no half-merged file
		}
	}()
	merge := shard.MergeLogs
	switch filepath.Ext(name) {
	case ".dat":
		merge = shard.MergeBatches
	case ".pcap":
		merge = shard.MergePcaps
	}
	if err := merge(f, inputs...); err != nil {
		return fmt.Errorf("merging %s: %w", path, err)
	}
	return nil
}
