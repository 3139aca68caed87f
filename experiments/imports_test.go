package experiments_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The engine's package graph, checked by TestPackageGraph:
//
//   - The root package experiments is the schema. Its children import it
//     and it imports none of them: every package under experiments/ it
//     imports is a building block that does not depend on it (limiter,
//     workload, server, ...), and the children named in schemaChildren
//     import it directly (a child reaches a sibling directly, never
//     through the root).
//   - The root holds at most maxSchemaLines lines of non-test Go.
//   - No package under experiments/ keeps mutable state in a
//     package-level variable: a var declared outside tests is never
//     written after its initializer, anywhere in the module's code or
//     tests (no assignment to it or through it, no ++ or --, no address
//     taken, no pointer-receiver method called on it). Tables built once
//     are fine; prefer a func or a const. The one exception is a type
//     table a program adds rows to (registry.Table: the gate and part
//     types, written only by its locked Register), and embed.FS, which
//     cannot be written.

// schemaChildren are the packages that import the schema.
var schemaChildren = []string{"document", "simulate", "sweep", "output", "decide", "deploy", "presets"}

const (
	modulePath     = "github.com/ratelab/ratelab"
	rootPath       = modulePath + "/experiments"
	maxSchemaLines = 4500
)

// listedPackage is what the test reads of `go list -json`.
type listedPackage struct {
	ImportPath   string
	Name         string
	Dir          string
	Export       string
	Standard     bool
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	Deps         []string
	ForTest      string
}

func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append([]string{"list", "-e", "-json"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestPackageGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("lists and type-checks the module")
	}
	t.Parallel()
	engine := map[string]listedPackage{}
	for _, p := range goList(t, "-deps=false", rootPath+"/...") {
		engine[p.ImportPath] = p
	}
	root, ok := engine[rootPath]
	if !ok {
		t.Fatal("no root package")
	}

	t.Run("the root imports none of its children", func(t *testing.T) {
		for _, imp := range root.Imports {
			if !strings.HasPrefix(imp, rootPath+"/") {
				continue
			}
			if slices.Contains(engine[imp].Deps, rootPath) {
				t.Errorf("the root imports %s, which depends on the root", imp)
			}
			if slices.Contains(schemaChildren, strings.TrimPrefix(imp, rootPath+"/")) {
				t.Errorf("the root imports its child %s", imp)
			}
		}
		for _, c := range schemaChildren {
			p, ok := engine[rootPath+"/"+c]
			if !ok {
				t.Errorf("no package %s", c)
				continue
			}
			if !slices.Contains(p.Imports, rootPath) {
				t.Errorf("%s does not import the schema: take it out of schemaChildren", c)
			}
		}
	})

	t.Run("the root is small", func(t *testing.T) {
		lines := 0
		for _, f := range root.GoFiles {
			lines += countLines(t, filepath.Join(root.Dir, f))
		}
		if lines > maxSchemaLines {
			t.Errorf("the root package has %d lines of non-test Go, more than %d: the schema only (the document's reading, the simulation and the sweep live in its children)", lines, maxSchemaLines)
		}
		t.Logf("the root package: %d lines of non-test Go in %d files", lines, len(root.GoFiles))
	})

	t.Run("no package-level mutable variables", func(t *testing.T) {
		checkPackageVars(t, engine)
	})
}

// importerFunc is a types.Importer of a func.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		n++
	}
	return n
}

// checkPackageVars finds every package-level var of the engine's non-test
// code and every write to one in the module (code and tests).
func checkPackageVars(t *testing.T, engine map[string]listedPackage) {
	// The vars: name -> where declared, by "importpath.Name".
	declared := map[string]token.Position{}
	fset := token.NewFileSet()
	for path, p := range engine {
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.VAR {
					continue
				}
				for _, s := range gd.Specs {
					vs := s.(*ast.ValueSpec)
					if exemptVar(vs.Type) {
						continue
					}
					for _, n := range vs.Names {
						if n.Name != "_" {
							declared[path+"."+n.Name] = fset.Position(n.Pos())
						}
					}
				}
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("found no package-level vars: the scan reads nothing")
	}

	// Every package of the module with its tests, type-checked from
	// source in dependency order, each against the module's packages
	// checked before it and the standard library's export data. Nothing
	// of the module is compiled for it: a go list -export of the module's
	// packages and their test variants would be go test ./...'s own
	// compiling, done again beside it from a clean cache. The standard
	// library is what every test binary is built on first. Third-party
	// packages are left unresolved (the check goes on without them) but
	// for those the engine's code imports (none today), so the engine's
	// variables' types and methods resolve, and a write to one is found
	// wherever it is.
	all := goList(t, "-deps", "-test", "./...")
	inModule := func(p listedPackage) bool {
		return p.ForTest == "" && strings.HasPrefix(p.ImportPath, modulePath) && !strings.HasSuffix(p.ImportPath, ".test") && !strings.HasSuffix(p.ImportPath, "_test")
	}
	engineDeps := map[string]bool{} // should the engine come to import a third-party package
	for _, p := range engine {
		for _, d := range p.Deps {
			engineDeps[d] = true
		}
	}
	var outside []string
	for _, p := range all {
		if p.ForTest == "" && !strings.HasPrefix(p.ImportPath, modulePath) && p.ImportPath != "unsafe" && (p.Standard || engineDeps[p.ImportPath]) {
			outside = append(outside, p.ImportPath)
		}
	}
	exports := map[string]string{}
	for _, p := range goList(t, append([]string{"-export"}, outside...)...) {
		if p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
	}
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		e, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(e)
	})
	checkedPkgs := map[string]*types.Package{}
	imp := importerFunc(func(path string) (*types.Package, error) {
		if p, ok := checkedPkgs[path]; ok {
			return p, nil
		}
		if strings.HasPrefix(path, modulePath) {
			return nil, os.ErrNotExist // a cycle through a test: left unresolved
		}
		return gc.Import(path)
	})
	parse := func(p listedPackage, files []string) []*ast.File {
		var parsed []*ast.File
		for _, name := range files {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
		}
		return parsed
	}
	newInfo := func() *types.Info {
		return &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	}
	check := func(path string, files []*ast.File, info *types.Info) *types.Package {
		// info nil: the declarations only, for importers.
		conf := types.Config{Importer: imp, Error: func(error) {}, IgnoreFuncBodies: info == nil} // a test-only export or import may not resolve: the rest does
		pkg, _ := conf.Check(path, fset, files, info)
		return pkg
	}
	// The packages as other packages see them, in dependency order (go
	// list -deps lists a package after what it imports).
	var module []listedPackage
	code := map[string][]*ast.File{}
	for _, p := range all {
		if !inModule(p) {
			continue
		}
		module = append(module, p)
		code[p.ImportPath] = parse(p, p.GoFiles)
		checkedPkgs[p.ImportPath] = check(p.ImportPath, code[p.ImportPath], nil)
	}
	checked := 0
	for _, p := range module {
		// The package with its tests: its code and in-package tests as
		// one package, then its external tests, which import it so.
		var withTests *types.Package
		for i, files := range [][]*ast.File{append(slices.Clone(code[p.ImportPath]), parse(p, p.TestGoFiles)...), parse(p, p.XTestGoFiles)} {
			if len(files) == 0 {
				continue
			}
			info := newInfo()
			if i == 0 {
				withTests = check(p.ImportPath, files, info)
			} else {
				plain := checkedPkgs[p.ImportPath]
				if withTests != nil {
					checkedPkgs[p.ImportPath] = withTests
				}
				check(p.ImportPath+"_test", files, info)
				checkedPkgs[p.ImportPath] = plain
			}
			checked++
			for _, f := range files {
				for _, w := range writes(f, info) {
					if obj := info.Uses[w.id]; obj != nil && obj.Pkg() != nil {
						key := obj.Pkg().Path() + "." + obj.Name()
						if at, ok := declared[key]; ok && obj.Parent() == obj.Pkg().Scope() {
							t.Errorf("%s: %s writes the package-level var %s (declared at %s): keep state in a value passed in (a run's options), or make the table a func",
								fset.Position(w.id.Pos()), w.how, key, at)
						}
					}
				}
			}
		}
	}
	if checked < len(engine) {
		t.Fatalf("type-checked %d file sets, fewer than the engine's %d packages", checked, len(engine))
	}
}

// exemptVar reports whether a var of this declared type may be written:
// the registries' tables (registry.Table: locked, written by Register
// alone) and embedded files (embed.FS, read-only).
func exemptVar(typ ast.Expr) bool {
	if ix, ok := typ.(*ast.IndexListExpr); ok {
		typ = ix.X
	}
	sel, ok := typ.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && (pkg.Name == "registry" && sel.Sel.Name == "Table" || pkg.Name == "embed" && sel.Sel.Name == "FS")
}

type write struct {
	id  *ast.Ident
	how string
}

// writes lists the identifiers a file writes to or through: assigned
// (or an element or field of them), incremented, their address taken,
// or a pointer-receiver method called on them.
func writes(f *ast.File, info *types.Info) []write {
	var out []write
	add := func(e ast.Expr, how string) {
		if id := base(e, info); id != nil {
			out = append(out, write{id, how})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				add(l, "an assignment")
			}
		case *ast.IncDecStmt:
			add(n.X, n.Tok.String())
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				add(n.X, "taking the address")
			}
		case *ast.RangeStmt:
			if n.Key != nil {
				add(n.Key, "a range")
			}
			if n.Value != nil {
				add(n.Value, "a range")
			}
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
				if s, ok := info.Selections[sel]; ok && s.Kind() == types.MethodVal {
					if sig, ok := s.Obj().Type().(*types.Signature); ok && sig.Recv() != nil {
						if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
							if _, isPtr := s.Recv().Underlying().(*types.Pointer); !isPtr {
								add(sel.X, "a pointer method ("+sel.Sel.Name+")")
							}
						}
					}
				}
			}
		}
		return true
	})
	return out
}

// base is the variable an expression writes into: x of x, x[i], x.f,
// (x), pkg.x; nil through a pointer or a call (the write goes elsewhere).
func base(e ast.Expr, info *types.Info) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			if t := info.TypeOf(x.X); t == nil || !isArray(t) && !isSlice(t) && !isMap(t) {
				return nil
			}
			e = x.X
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				if _, pkg := info.Uses[id].(*types.PkgName); pkg {
					return x.Sel
				}
			}
			if t := info.TypeOf(x.X); t == nil || isPointer(t) {
				return nil
			}
			e = x.X
		default:
			return nil
		}
	}
}

func isPointer(t types.Type) bool { _, ok := t.Underlying().(*types.Pointer); return ok }
func isArray(t types.Type) bool   { _, ok := t.Underlying().(*types.Array); return ok }
func isSlice(t types.Type) bool   { _, ok := t.Underlying().(*types.Slice); return ok }
func isMap(t types.Type) bool     { _, ok := t.Underlying().(*types.Map); return ok }
