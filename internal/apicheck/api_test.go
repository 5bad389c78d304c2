package apicheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// listed is what "go list -export -json" says of a package.
type listed struct {
	ImportPath string
	Name       string
	Export     string
	Module     *struct{ Main bool }
}

// TestPublicAPIHasNoInternalTypes walks the exported API of every public
// package of the module, from the compiler's export data, and fails for
// each exported function, variable, constant, field or method whose type
// mentions a type declared in an internal package.
func TestPublicAPIHasNoInternalTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the export data of every package")
	}
	pkgs, exports := listModule(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var public int
	for _, p := range pkgs {
		if isInternal(p.ImportPath) || p.Name == "main" {
			continue
		}
		public++
		pkg, err := imp.Import(p.ImportPath)
		if err != nil {
			t.Fatalf("importing %s: %v", p.ImportPath, err)
		}
		for _, problem := range internalMentions(pkg) {
			t.Errorf("%s", problem)
		}
	}
	if public == 0 {
		t.Fatal("found no public package")
	}
}

// TestInternalMentionsFindsThem checks the walk on a package that leaks an
// internal type in every place one can.
func TestInternalMentionsFindsThem(t *testing.T) {
	internalPkg := types.NewPackage("example.com/m/internal/x", "x")
	secret := types.NewNamed(types.NewTypeName(token.NoPos, internalPkg, "Secret", nil), types.Typ[types.Int], nil)
	pub := types.NewPackage("example.com/m/pub", "pub")
	scope := pub.Scope()
	ptr := types.NewPointer(secret)
	param := types.NewTuple(types.NewVar(token.NoPos, pub, "s", ptr))
	scope.Insert(types.NewFunc(token.NoPos, pub, "F", types.NewSignatureType(nil, nil, nil, param, nil, false)))
	scope.Insert(types.NewVar(token.NoPos, pub, "V", types.NewSlice(secret)))
	st := types.NewStruct([]*types.Var{
		types.NewField(token.NoPos, pub, "Exported", types.NewMap(types.Typ[types.String], secret), false),
		types.NewField(token.NoPos, pub, "hidden", secret, false),
	}, nil)
	named := types.NewNamed(types.NewTypeName(token.NoPos, pub, "T", nil), st, nil)
	named.AddMethod(types.NewFunc(token.NoPos, pub, "M", types.NewSignatureType(types.NewVar(token.NoPos, pub, "t", named), nil, nil, nil, param, false)))
	scope.Insert(named.Obj())
	ok := types.NewNamed(types.NewTypeName(token.NoPos, pub, "OK", nil), types.NewStruct([]*types.Var{
		types.NewField(token.NoPos, pub, "hidden", secret, false),
	}, nil), nil)
	scope.Insert(ok.Obj())

	got := internalMentions(pub)
	want := []string{"F", "T.Exported", "T.M", "V"}
	if len(got) != len(want) {
		t.Fatalf("found %d mentions, want %d: %q", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], "example.com/m/pub."+w+" ") {
			t.Errorf("mention %d = %q, want one of %s", i, got[i], w)
		}
	}
}

// listModule lists the module's packages and the export data files of
// them and of everything they import.
func listModule(t *testing.T) (own []listed, exports map[string]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-pgo=off", "-export", "-deps", "-json=ImportPath,Name,Export,Module", "github.com/wirebench/wirebench/...")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports = make(map[string]string)
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Main {
			own = append(own, p)
		}
	}
	return own, exports
}

// isInternal reports whether code outside the module cannot import path.
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// internalMentions returns, sorted by name, one line per exported name of
// pkg whose type mentions an internal package's type.
func internalMentions(pkg *types.Package) []string {
	var out []string
	report := func(name string, t types.Type) {
		if leak := findInternal(t, map[types.Type]bool{}); leak != "" {
			out = append(out, fmt.Sprintf("%s.%s mentions %s", pkg.Path(), name, leak))
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		tn, isType := obj.(*types.TypeName)
		if !isType {
			report(name, obj.Type())
			continue
		}
		if tn.IsAlias() {
			report(name, obj.Type())
			continue
		}
		named, _ := obj.Type().(*types.Named)
		if named == nil {
			continue
		}
		if tp := named.TypeParams(); tp != nil {
			for i := range tp.Len() {
				report(name+"["+tp.At(i).Obj().Name()+"]", tp.At(i).Constraint())
			}
		}
		switch u := named.Underlying().(type) {
		case *types.Struct:
			for i := range u.NumFields() {
				if f := u.Field(i); f.Exported() {
					report(name+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := range u.NumMethods() {
				if m := u.Method(i); m.Exported() {
					report(name+"."+m.Name(), m.Type())
				}
			}
		default:
			report(name, u)
		}
		for _, recv := range []types.Type{named, types.NewPointer(named)} {
			ms := types.NewMethodSet(recv)
			for i := range ms.Len() {
				m := ms.At(i).Obj()
				if m.Exported() && (recv == named || !slices.Contains(methodNames(types.NewMethodSet(named)), m.Name())) {
					report(name+"."+m.Name(), m.Type())
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func methodNames(ms *types.MethodSet) []string {
	names := make([]string, ms.Len())
	for i := range ms.Len() {
		names[i] = ms.At(i).Obj().Name()
	}
	return names
}

// findInternal returns the first type declared in an internal package
// that t mentions, "" if none. Named types of other packages are not
// looked into: their own package's walk checks them when it is public.
func findInternal(t types.Type, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		return findInternal(types.Unalias(t), seen)
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && isInternal(p.Path()) {
			return t.String()
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				if s := findInternal(args.At(i), seen); s != "" {
					return s
				}
			}
		}
	case *types.Pointer:
		return findInternal(t.Elem(), seen)
	case *types.Slice:
		return findInternal(t.Elem(), seen)
	case *types.Array:
		return findInternal(t.Elem(), seen)
	case *types.Chan:
		return findInternal(t.Elem(), seen)
	case *types.Map:
		if s := findInternal(t.Key(), seen); s != "" {
			return s
		}
		return findInternal(t.Elem(), seen)
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				if s := findInternal(tup.At(i).Type(), seen); s != "" {
					return s
				}
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if s := findInternal(t.Field(i).Type(), seen); s != "" {
				return s
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if s := findInternal(t.Method(i).Type(), seen); s != "" {
				return s
			}
		}
		for i := range t.NumEmbeddeds() {
			if s := findInternal(t.EmbeddedType(i), seen); s != "" {
				return s
			}
		}
	case *types.Union:
		for i := range t.Len() {
			if s := findInternal(t.Term(i).Type(), seen); s != "" {
				return s
			}
		}
	case *types.TypeParam:
		return findInternal(t.Constraint(), seen)
	}
	return ""
}
