package main

// The clients install knows, as its help and the documentation list them.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
)

// TestClientTables: the clients install's help lists are the rows of
// install.Clients, and so are the README's and docs/clients.md's tables
// of clients and docs/commands.md's list, which are made from the rows
// (-update rewrites them). docs/clients.md opens with the first, Claude
// Desktop, and its table has the others.
func TestClientTables(t *testing.T) {
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
	if names := install.Names(); !slices.Equal(listed, names) {
		t.Errorf("install --help lists the clients %q; install knows %q", listed, names)
	}

	installHome(t) // DocFiles: no variable moves a file
	var readme, clients, names strings.Builder
	readme.WriteString("| client | add it | check it |\n|---|---|---|\n")
	clients.WriteString("| client | command | file (macOS; Linux) | entry |\n|---|---|---|---|\n")
	for i, c := range install.Clients {
		if c.Check == "" {
			t.Errorf("client %s: its row has no Check, for the README", c.Name)
		}
		add := fmt.Sprintf("`tairseach-mcp install %s`", c.Name)
		fmt.Fprintf(&readme, "| %s | %s | %s |\n", c.Title, add, c.Check)
		if i > 0 { // the first has a section of its own in docs/clients.md
			fmt.Fprintf(&clients, "| %s | %s | %s | %s |\n", c.Title, add, docFile(c), docEntry(c))
			names.WriteString(", ")
		}
		fmt.Fprintf(&names, "`%s`", c.Name)
	}
	madeDoc(t, "README.md", "clients", readme.String())
	madeDoc(t, "docs/clients.md", "clients", clients.String())
	madeDoc(t, "docs/commands.md", "clients", names.String())
}

// docFile is docs/clients.md's cell of c's file: on macOS, then elsewhere
// when that differs, then what else moves it.
func docFile(c install.Client) string {
	macOS, other := c.DocFiles()
	s := "`" + macOS + "`"
	if other != macOS {
		s += "; `" + other + "`"
	}
	if c.FileNote != "" {
		s += " (" + c.FileNote + ")"
	}
	return s
}

// docEntry is docs/clients.md's cell of c's entry: where it is, and the
// type of a stdio entry when the client takes one.
func docEntry(c install.Client) string {
	if c.Format.Name == "TOML" {
		return "a `[" + c.Key + "." + install.EntryName + "]` table"
	}
	s := "`" + c.Key + "." + install.EntryName + "`"
	for _, f := range c.Entry(install.Server{Command: "x"}) {
		if f.Key == "type" && f.Value != nil {
			s += fmt.Sprintf(", `\"type\": \"%v\"`", f.Value)
		}
	}
	return s
}

// madeDoc holds the text of page between the markers
// "<!-- NAME: made by TEST; do not edit by hand -->" and
// "<!-- end of NAME -->" to want, the text the test made from the code,
// or with -update writes want there.
func madeDoc(t *testing.T, page, name, want string) {
	t.Helper()
	test, _, _ := strings.Cut(t.Name(), "/")
	start, end := "<!-- "+name+": made by "+test+"; do not edit by hand -->", "<!-- end of "+name+" -->"
	if strings.HasSuffix(want, "\n") {
		start += "\n" // a block: the markers are lines of their own
	}
	path := filepath.Join(repoRoot, page)
	doc := string(readFile(t, path))
	i, j := strings.Index(doc, start), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Errorf("%s has no %s between %q and %q", page, name, start, end)
		return
	}
	got := doc[i+len(start) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(start)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's %s are\n%s\nmade from the code they are\n%s\n(go test ./cmd/tairseach-mcp/ -run %s -update rewrites them)", page, name, got, want, test)
}
