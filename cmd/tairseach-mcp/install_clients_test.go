package main

// The clients install knows, as its help and the documentation list them.

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
)

// TestClientTables: the clients install's help lists, and the README's and
// docs/clients.md's tables, are the rows of install.Clients, each by its title,
// and no other. docs/clients.md opens with the first, Claude Desktop, and
// its table has the others.
func TestClientTables(t *testing.T) {
	var names, titles []string
	for _, c := range install.Clients {
		names, titles = append(names, c.Name), append(titles, c.Title)
	}
	stdout, stderr, code := cli("", "install", "--help")
	_, list, ok := strings.Cut(stdout, "Clients and their files (macOS; ~/.config on Linux):\n")
	if code != 0 || !ok {
		t.Fatalf("install --help: exit %d, no list of clients\n%s%s", code, stdout, stderr)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var listed []string
	for _, line := range strings.Split(list, "\n") {
		listed = append(listed, strings.Fields(line)[0])
	}
	if !slices.Equal(listed, names) {
		t.Errorf("install --help lists the clients %q; install knows %q", listed, names)
	}

	row := regexp.MustCompile("^\\| ([^|]+) \\| `tairseach-mcp install ([a-z0-9-]+)` \\|")
	for _, tt := range []struct {
		page, header string
		skip         int // rows of mcpClients the page has elsewhere
	}{
		{"README.md", "| client | add it | check it |", 0},
		{"docs/clients.md", "| client | command | file (macOS; Linux) | entry |", 1},
	} {
		_, table, ok := strings.Cut(string(readFile(t, filepath.Join(repoRoot, tt.page))), "\n"+tt.header+"\n")
		if !ok {
			t.Errorf("%s has no table of clients (%q)", tt.page, tt.header)
			continue
		}
		table, _, _ = strings.Cut(table, "\n\n")
		got := map[string]string{}
		var order []string
		for _, line := range strings.Split(table, "\n")[1:] {
			m := row.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("%s: a row of the table of clients names no client: %s", tt.page, line)
				continue
			}
			got[m[2]], order = m[1], append(order, m[2])
		}
		want := names[tt.skip:]
		if !slices.Equal(slices.Sorted(slices.Values(order)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%s's table of clients has %q; install knows %q", tt.page, order, want)
		}
		for i, n := range want {
			if title, ok := got[n]; ok && title != titles[tt.skip+i] {
				t.Errorf("%s: %s is called %q, and %q in install's messages", tt.page, n, title, titles[tt.skip+i])
			}
		}
	}
}

// mcpClients are install's clients by name and title, for the tests of
// the docs (docs_test.go).
var mcpClients = func() []struct{ name, title string } {
	var cs []struct{ name, title string }
	for _, c := range install.Clients {
		cs = append(cs, struct{ name, title string }{c.Name, c.Title})
	}
	return cs
}()
