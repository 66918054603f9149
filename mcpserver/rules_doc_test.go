package mcpserver

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
)

// update rewrites what the tests hold to the code: docs/policy.md's list
// of rules.
var update = flag.Bool("update", false, "rewrite the docs the tests hold to the code")

// rulesDoc is docs/policy.md's list of the refusal rules, as the rules
// say it.
func rulesDoc() string {
	var b strings.Builder
	b.WriteString("| rule | refuses when | audit outcome |\n|---|---|---|\n")
	for _, r := range backend.Rules() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.Name, r.Doc, r.Logged)
	}
	return b.String()
}

// TestPolicyDocListsEveryRule: every refusal rule has a name of its own,
// its words, and its line in docs/policy.md, made from it (-update
// rewrites the list): a rule cannot be half added.
func TestPolicyDocListsEveryRule(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range backend.Rules() {
		if r.Name == "" || r.Doc == "" || r.Logged == "" || seen[r.Name] {
			t.Errorf("rule %+v: a rule needs a name of its own and its words", r)
		}
		seen[r.Name] = true
	}
	path := filepath.Join("..", "docs", "policy.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- rules: made by TestPolicyDocListsEveryRule; do not edit by hand -->\n", "<!-- end of rules -->"
	doc := string(b)
	i, j := strings.Index(doc, start), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no list of the rules between %q and %q", path, start, end)
	}
	want := rulesDoc()
	if got := doc[i+len(start) : j]; got != want {
		if *update {
			doc = doc[:i+len(start)] + want + doc[j:]
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s lists the rules as\n%s\nthe rules say\n%s(go test ./mcpserver/ -run TestPolicyDocListsEveryRule -update rewrites it)", path, got, want)
	}
}
