package runner

import (
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// x86Features are the CPU features a GOAMD64=v3 binary needs. The Go
// runtime checks exactly these at start-up (runtime/asm_amd64.s) and refuses
// to run without them, so the builder must check the same list.
type x86Features struct {
	AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, OSXSAVE bool
}

func hostX86Features() x86Features {
	x := cpu.X86
	return x86Features{
		AVX: x.HasAVX, AVX2: x.HasAVX2, BMI1: x.HasBMI1, BMI2: x.HasBMI2, F16C: x.HasF16C,
		FMA: x.HasFMA, LZCNT: x.HasLZCNT, MOVBE: x.HasMOVBE, OSXSAVE: x.HasOSXSAVE,
	}
}

// missingV3 lists the v3 features f lacks.
func (f x86Features) missingV3() []string {
	var missing []string
	for _, c := range []struct {
		name string
		has  bool
	}{
		{"AVX", f.AVX}, {"AVX2", f.AVX2}, {"BMI1", f.BMI1}, {"BMI2", f.BMI2}, {"F16C", f.F16C},
		{"FMA", f.FMA}, {"LZCNT", f.LZCNT}, {"MOVBE", f.MOVBE}, {"OSXSAVE", f.OSXSAVE},
	} {
		if !c.has {
			missing = append(missing, c.name)
		}
	}
	return missing
}

// GOAMD64Choice is the microarchitecture level chosen for optimised builds
// and why.
type GOAMD64Choice struct {
	Level  string // "v3", or "" to leave Go's default (v1) or the environment's value
	Reason string
}

// ChooseGOAMD64 picks the GOAMD64 level of optimised builds. want is "auto"
// (or empty) to detect, or an explicit level ("v1" to "v4") that is used as
// given. env is the GOAMD64 value of the environment; in auto mode a value
// set there wins, as the user asked for it.
func ChooseGOAMD64(want, env string) GOAMD64Choice {
	return chooseGOAMD64(want, env, runtime.GOARCH, hostX86Features())
}

func chooseGOAMD64(want, env, goarch string, f x86Features) GOAMD64Choice {
	switch {
	case want != "" && want != "auto":
		return GOAMD64Choice{want, "as asked with --goamd64"}
	case goarch != "amd64":
		return GOAMD64Choice{"", "not an amd64 machine"}
	case env != "":
		return GOAMD64Choice{env, "from the GOAMD64 environment variable"}
	}
	if missing := f.missingV3(); len(missing) > 0 {
		return GOAMD64Choice{"", "this CPU lacks " + strings.Join(missing, ", ") + " (needed by v3); Go's default v1 is used"}
	}
	return GOAMD64Choice{"v3", "this CPU has AVX2, BMI1/2, FMA, F16C, LZCNT and MOVBE"}
}
