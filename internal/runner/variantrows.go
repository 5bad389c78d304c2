package runner

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// apply adds the rows entry e makes for protocol desc to rows: in place
// of the rows of the same names, or after them; a drop entry removes the
// rows its name matches instead.
func (e *entry) apply(rows []Variant, cfg VariantConfig, desc *parsers.Protocol) []Variant {
	if e.Protocols != nil && !slices.Contains(e.Protocols, desc.Name) {
		return rows
	}
	if e.Drop {
		pat := withProtocol(e.Name, desc.Name)
		return slices.DeleteFunc(rows, func(v Variant) bool {
			ok, _ := filepath.Match(pat, v.Name)
			return ok
		})
	}
	for _, v := range e.rows(cfg, desc) {
		if i := indexOf(rows, v.Name); i >= 0 {
			rows[i] = v
		} else {
			rows = append(rows, v)
		}
	}
	return rows
}

func withProtocol(s, proto string) string { return strings.ReplaceAll(s, "{protocol}", proto) }

// rows returns the variants entry e makes for protocol desc.
func (e *entry) rows(cfg VariantConfig, desc *parsers.Protocol) []Variant {
	p := desc.Name
	name := withProtocol(e.Name, p)
	// An implementation the runner does not know of may be linked into
	// a binary of the user's: entries that name their protocols apply.
	hasImpl := func(impl string) bool {
		_, ok := desc.Implementation(impl)
		return ok || e.Protocols != nil
	}
	analyzed := slices.Contains(builtin.Protocols(), desc)
	switch e.Kind {
	case Replay:
		if !hasImpl(e.Parsers) {
			return nil
		}
		return []Variant{replayVariant(cfg, p, name, withProtocol(e.Binary, p), e.Parsers)}
	case Analyze:
		if !analyzed || !hasImpl(e.Parsers) {
			return nil
		}
		return []Variant{analyzeVariant(cfg, p, name, withProtocol(e.Binary, p), e.Parsers)}
	case TShark:
		if cfg.TShark == "" {
			return nil
		}
		v, ok := e.program(cfg, desc, name)
		if !ok {
			return nil
		}
		v.Binary = cfg.TShark
		return []Variant{v}
	case Program:
		if v, ok := e.program(cfg, desc, name); ok {
			return []Variant{v}
		}
	case GoPeer:
		base := p + "-" + e.Name
		vs := []Variant{
			replayVariant(cfg, p, base+"-static", base+"-static", e.Implementation),
			replayVariant(cfg, p, base+"-opt", base+"-opt", e.Implementation),
		}
		if analyzed && (e.Analyze == nil || *e.Analyze) {
			v := analyzeVariant(cfg, p, p+"-analyze-"+e.Name, "analyze-"+e.Name+"-static", e.Implementation)
			// The implementation may parse this protocol only.
			v.Args = append(v.Args, "--protocols", p)
			vs = append(vs, v)
		}
		return vs
	}
	return nil
}

// replayVariant is a row of a replay binary of the work directory on
// spicy-P.dat.
func replayVariant(cfg VariantConfig, p, name, binary, impl string) Variant {
	dat := filepath.Join(cfg.TraceDir, "spicy-"+p+".dat")
	logDir := filepath.Join(cfg.OutDir(), name)
	args := []string{"-U", "-F", dat}
	if impl != builtin.Native {
		args = []string{"-U", "--parsers", impl, "-F", dat}
	}
	return Variant{
		Name: name, Protocol: p, Kind: Replay, Parsers: impl,
		Binary:  filepath.Join(cfg.WorkDir, binary),
		Args:    args,
		LogArgs: []string{"--log-dir", logDir},
		Input:   dat, LogDir: logDir, Logs: []string{p + ".log"},
		ProfileFlag: "--cpuprofile", Built: true,
	}
}

// analyzeVariant is a row of an analyzer of the work directory on
// spicy-P.pcap.
func analyzeVariant(cfg VariantConfig, p, name, binary, impl string) Variant {
	pcap := filepath.Join(cfg.TraceDir, "spicy-"+p+".pcap")
	logDir := filepath.Join(cfg.OutDir(), name)
	return Variant{
		Name: name, Protocol: p, Kind: Analyze, Parsers: impl,
		Binary: filepath.Join(cfg.WorkDir, binary),
		Args:   []string{"-r", pcap, "-o", logDir, "--parsers", impl},
		Input:  pcap, LogDir: logDir, Logs: []string{"conn.log", p + ".log"},
		ProfileFlag: "--cpuprofile", Built: true,
	}
}

// program is the row of a program entry, false when the protocol has no
// {tshark-args} the command needs.
func (e *entry) program(cfg VariantConfig, desc *parsers.Protocol, name string) (Variant, bool) {
	p := desc.Name
	v := Variant{
		Name: name, Protocol: p, Kind: e.Kind,
		Input:  filepath.Join(cfg.TraceDir, "spicy-"+p+"."+e.Input),
		LogDir: filepath.Join(cfg.OutDir(), name),
	}
	dirs := map[string]string{
		"{dat}": filepath.Join(cfg.TraceDir, "spicy-"+p+".dat"), "{pcap}": filepath.Join(cfg.TraceDir, "spicy-"+p+".pcap"),
		"{logdir}": v.LogDir, "{workdir}": cfg.WorkDir,
	}
	if e.Cwd != "" {
		// The program runs elsewhere: the paths must not be relative.
		for k, d := range dirs {
			dirs[k] = absPath(d)
		}
		v.Input, v.LogDir = absPath(v.Input), absPath(v.LogDir)
	}
	expand := func(s string) string {
		s = withProtocol(s, p)
		for k, d := range dirs {
			s = strings.ReplaceAll(s, k, d)
		}
		return s
	}
	var cmd []string
	for _, a := range e.Command {
		if a == "{tshark-args}" {
			if desc.TShark == nil {
				return Variant{}, false
			}
			cmd = append(cmd, desc.TShark...)
			continue
		}
		cmd = append(cmd, expand(a))
	}
	if len(cmd) == 0 || cmd[0] == "" {
		return Variant{}, false
	}
	v.Binary, v.Args = cmd[0], cmd[1:]
	if path, err := exec.LookPath(v.Binary); err == nil && !strings.ContainsRune(v.Binary, filepath.Separator) {
		v.Binary = path
	} else if e.Cwd != "" && strings.ContainsRune(v.Binary, filepath.Separator) {
		v.Binary = absPath(v.Binary)
	}
	for _, a := range e.Check {
		v.CheckCommand = append(v.CheckCommand, expand(a))
	}
	if e.Cwd != "" {
		v.Dir = expand(e.Cwd)
	}
	for _, l := range e.Logs {
		v.Logs = append(v.Logs, withProtocol(l, p))
	}
	switch e.Count {
	case CountStdout:
		v.StdoutLog = v.Logs[0]
	case CountEve:
		v.EveTypes, v.Logs = v.Logs, nil
		for _, t := range v.EveTypes {
			v.Logs = append(v.Logs, eveLog+":"+t)
		}
	}
	return v, true
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
