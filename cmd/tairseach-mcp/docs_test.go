package main

// What the README, docs/ and the Makefile say of the binary and its tests
// is what they do: a failed call's exit status, the environment the
// binary reads, the Node MCP Inspector needs, and the make targets.

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docText returns a page of the repository with its white space, line
// ends included, made single spaces, so that a sentence wrapped anywhere
// is found whole.
func docText(t *testing.T, name string) string {
	t.Helper()
	return strings.Join(strings.Fields(string(readFile(t, filepath.Join(repoRoot, name)))), " ")
}

// TestReadmeCallExitStatus: the exit statuses the README gives a failed
// call are call's: a tool that returns an error, an unknown tool, and
// arguments that do not fit the tool's schema.
func TestReadmeCallExitStatus(t *testing.T) {
	says := regexp.MustCompile(`A failed call says why once, on stderr: it exits (\d) when the tool returns an error, and (\d) for an unknown tool or arguments that do not fit`).
		FindStringSubmatch(docText(t, "README.md"))
	if says == nil {
		t.Fatal("README.md does not say how a failed call exits (\"A failed call says why once, on stderr: it exits N when the tool returns an error, and N for an unknown tool or arguments that do not fit\")")
	}
	e := newEnv(t)
	startBackend(t, e.socket)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "demo.fail"}, says[1]},
		{[]string{"call", "contacts.lst"}, says[2]},
		{[]string{"call", "contacts.list", "limit=abc"}, says[2]},
	} {
		_, stderr, code := cli("", append([]string{"--manifests", e.manifests, "--socket", e.socket}, tt.args...)...)
		if strconv.Itoa(code) != tt.want {
			t.Errorf("tairseach-mcp %s: exit %d, the README says %s\n%s", strings.Join(tt.args, " "), code, tt.want, stderr)
		}
	}
}

// TestDocsEnvironment: docs/flags.md names every environment variable the
// binary reads by name (os.Getenv and os.LookupEnv of a constant, in the
// packages of this module it is built from), or a pattern such as
// `OTEL_*` that covers it. The flags' own variables are the flags table's.
func TestDocsEnvironment(t *testing.T) {
	list := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .GoFiles}} {{$.Dir}}/{{.}}{{end}}`, "./cmd/tairseach-mcp")
	list.Dir = repoRoot
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	read := map[string]string{} // variable → a file that reads it
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if !strings.HasPrefix(fields[0], "github.com/geilt/tairseach-mcp/") {
			continue
		}
		for _, file := range fields[1:] {
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv") {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "os" {
					return true
				}
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					rel, _ := filepath.Rel(repoRoot, file)
					read[name] = rel
				}
				return true
			})
		}
	}
	if len(read) < 5 {
		t.Fatalf("found %d variables the binary reads (%v); the search is broken", len(read), read)
	}
	flags := string(readFile(t, filepath.Join(repoRoot, "docs", "flags.md")))
	var patterns []string
	for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]*)\\*`").FindAllStringSubmatch(flags, -1) {
		patterns = append(patterns, m[1])
	}
	for name, file := range read {
		covered := slices.ContainsFunc(patterns, func(p string) bool { return strings.HasPrefix(name, p) })
		if !strings.Contains(flags, "`"+name+"`") && !covered {
			t.Errorf("docs/flags.md does not name %s, which %s reads", name, file)
		}
	}
}

// TestReadmeInspectorNode: the Node the README asks for to run MCP
// Inspector is the one the pinned Inspector declares (its engines), so
// that npm prints no EBADENGINE warning on the Node the README names.
func TestReadmeInspectorNode(t *testing.T) {
	var lock struct {
		Packages map[string]struct {
			Version string
			Engines struct{ Node string }
		}
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(repoRoot, "scripts", "package-lock.json")), &lock); err != nil {
		t.Fatal(err)
	}
	inspector := lock.Packages["node_modules/@modelcontextprotocol/inspector"]
	min, ok := strings.CutPrefix(inspector.Engines.Node, ">=")
	if !ok {
		t.Fatalf("scripts/package-lock.json: MCP Inspector's engines.node is %q, not >=VERSION", inspector.Engines.Node)
	}
	min = strings.TrimSuffix(strings.TrimSpace(min), ".0")
	says := regexp.MustCompile(`the Inspector line needs the npm registry and Node ≥ ([0-9.]+)`).FindStringSubmatch(docText(t, "README.md"))
	if says == nil {
		t.Fatal("README.md does not say which Node the Inspector line needs (\"the Inspector line needs the npm registry and Node ≥ N\")")
	}
	if says[1] != min {
		t.Errorf("README.md: the Inspector line needs Node ≥ %s, but MCP Inspector %s declares node %s", says[1], inspector.Version, inspector.Engines.Node)
	}
}

// TestMakefileTargets: every target the Makefile declares .PHONY has a
// rule, and every target the README and docs/development.md name with
// make is one.
func TestMakefileTargets(t *testing.T) {
	mk := string(readFile(t, filepath.Join(repoRoot, "Makefile")))
	rules := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):`).FindAllStringSubmatch(mk, -1) {
		rules[m[1]] = true
	}
	phony := regexp.MustCompile(`(?m)^\.PHONY:(.*)$`).FindAllStringSubmatch(mk, -1)
	if len(phony) == 0 {
		t.Fatal("the Makefile declares no .PHONY targets")
	}
	for _, p := range phony {
		for _, target := range strings.Fields(p[1]) {
			if !rules[target] {
				t.Errorf("the Makefile declares %s .PHONY but has no rule for it", target)
			}
		}
	}
	for _, page := range []string{"README.md", "docs/development.md"} {
		for _, m := range regexp.MustCompile("`make ([a-z][a-z-]*)").FindAllStringSubmatch(string(readFile(t, filepath.Join(repoRoot, page))), -1) {
			if !rules[m[1]] {
				t.Errorf("%s names make %s, which the Makefile has no rule for", page, m[1])
			}
		}
	}
}
