package depcheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tracegrid/tracegrid/"

// pure are the packages that must not link GL, libav or cgo.
var pure = []string{"eval/score", "eval/parse", "eval/report", "eval/results"}

// forbidden are the import paths (each with everything below it) that
// mean GL or libav.
var forbidden = []struct{ path, what string }{
	{"github.com/go-gl", "GL bindings"},
	{"github.com/asticode", "libav bindings"},
	{module + "gpu", "GL (package gpu)"},
	{module + "encode", "libav (package encode)"},
	{module + "shaders", "GL shaders"},
}

// pkg is one line of `go list -deps -test`.
type pkg struct {
	path     string // as go list names it, "p [q.test]" for a test variant
	standard bool
	cgo      bool // has cgo files when cgo is enabled
	imports  []string
}

func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is not on PATH (go test puts GOROOT/bin there): %v", err)
	}
	return p
}

// listDeps returns every package root and its tests depend on, by path.
func listDeps(t *testing.T, root string) map[string]pkg {
	t.Helper()
	cmd := exec.Command(goTool(t), "list", "-deps", "-test",
		"-f", `{{.ImportPath}}|{{.Standard}}|{{len .CgoFiles}}|{{join .Imports " "}}`, module+root)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1") // so cgo files are listed
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -test %s: %v\n%s", root, err, stderr.Bytes())
	}
	deps := map[string]pkg{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "|", 4)
		if len(f) != 4 {
			t.Fatalf("go list: unexpected line %q", sc.Text())
		}
		deps[f[0]] = pkg{path: f[0], standard: f[1] == "true", cgo: f[2] != "0", imports: strings.Fields(f[3])}
	}
	if len(deps) == 0 {
		t.Fatalf("go list -deps -test %s listed nothing", root)
	}
	return deps
}

// chain is the shortest import chain from the roots to target, for the
// failure message ("eval/report → pipeline → gpu").
func chain(deps map[string]pkg, roots []string, target string) string {
	prev := map[string]string{}
	queue := append([]string(nil), roots...)
	for _, r := range roots {
		prev[r] = ""
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == target {
			var hops []string
			for q := p; q != ""; q = prev[q] {
				hops = append([]string{strings.TrimPrefix(q, module)}, hops...)
			}
			return strings.Join(hops, " → ")
		}
		for _, i := range deps[p].imports {
			if _, seen := prev[i]; !seen {
				prev[i] = p
				queue = append(queue, i)
			}
		}
	}
	return target
}

// bad says why a dependency is not allowed, or "".
func bad(p pkg) string {
	base, _, _ := strings.Cut(p.path, " ")
	for _, f := range forbidden {
		if base == f.path || strings.HasPrefix(base, f.path+"/") {
			return f.what
		}
	}
	if p.cgo && !p.standard {
		return "cgo"
	}
	return ""
}

// TestPurePackagesLinkNoGLNorLibav: go list -deps (tests included) of
// each package shows no go-gl, no go-astiav, no gpu or encode and no
// non-standard package with cgo files. (The standard library's net and
// runtime/cgo have cgo files but pure-Go fallbacks: CGO_ENABLED=0 below
// proves they are not needed.)
func TestPurePackagesLinkNoGLNorLibav(t *testing.T) {
	for _, root := range pure {
		t.Run(root, func(t *testing.T) {
			deps := listDeps(t, root)
			var roots []string
			for path := range deps {
				if base, _, _ := strings.Cut(path, " "); base == module+root || base == module+root+"_test" || path == module+root+".test" {
					roots = append(roots, path)
				}
			}
			for _, p := range deps {
				if why := bad(p); why != "" {
					t.Errorf("%s links %s (%s): %s", root, p.path, why, chain(deps, roots, p.path))
				}
			}
		})
	}
}

// TestPurePackagesBuildWithoutCgo compiles and links the packages' test
// binaries with CGO_ENABLED=0 and runs them with no test selected (`make
// test` runs their tests so too).
func TestPurePackagesBuildWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four test binaries without cgo")
	}
	args := []string{"test", "-count=1", "-run", "^$", "-vet=off"}
	for _, p := range pure {
		args = append(args, module+p)
	}
	cmd := exec.Command(goTool(t), args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// The checker itself: a forbidden dependency is reported with its import
// chain, and an allowed one is not.
func TestCheckerFindsForbidden(t *testing.T) {
	deps := map[string]pkg{
		module + "eval/report":               {path: module + "eval/report", imports: []string{module + "pipeline", "fmt"}},
		module + "pipeline":                  {path: module + "pipeline", imports: []string{module + "gpu"}},
		module + "gpu":                       {path: module + "gpu", imports: []string{"github.com/go-gl/gl/v3.3-core/gl"}},
		"github.com/go-gl/gl/v3.3-core/gl":   {path: "github.com/go-gl/gl/v3.3-core/gl", cgo: true},
		"fmt":                                {path: "fmt", standard: true},
		"net":                                {path: "net", standard: true, cgo: true},
		module + "gpuish":                    {path: module + "gpuish"},
		"example.com/sqlite3":                {path: "example.com/sqlite3", cgo: true},
		module + "encode [eval/report.test]": {path: module + "encode [eval/report.test]"},
	}
	want := map[string]string{
		module + "gpu":                       "GL (package gpu)",
		"github.com/go-gl/gl/v3.3-core/gl":   "GL bindings",
		"example.com/sqlite3":                "cgo",
		module + "encode [eval/report.test]": "libav (package encode)",
	}
	for path, p := range deps {
		if got := bad(p); got != want[path] {
			t.Errorf("bad(%s) = %q, want %q", path, got, want[path])
		}
	}
	if got, w := chain(deps, []string{module + "eval/report"}, "github.com/go-gl/gl/v3.3-core/gl"), "eval/report → pipeline → gpu → github.com/go-gl/gl/v3.3-core/gl"; got != w {
		t.Errorf("chain = %q, want %q", got, w)
	}
}
