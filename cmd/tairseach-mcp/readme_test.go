package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// readmeBlock returns the lines of the first sh code block under the
// README heading named heading.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in, inBlock := false, false
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			if inBlock {
				t.Fatalf("README: the sh block under %q is not closed", heading)
			}
			in = strings.TrimPrefix(l, "## ") == heading
		case in && !inBlock && l == "```sh":
			inBlock = true
		case inBlock && l == "```":
			return lines
		case inBlock:
			lines = append(lines, l)
		}
	}
	t.Fatalf("README: no sh block under the heading %q", heading)
	return nil
}

// readmeTryWants is what each command of "Try it without the app" must
// print on stdout, besides exiting 0 with something to say. A command the
// README adds must be given its expectation here.
var readmeTryWants = map[string][]string{
	"bin/tairseach-mcp tools":                           {"tairseach_contacts_search", "contacts.search", "tairseach_word_count"},
	"bin/tairseach-mcp call contacts.search query=anna": {`"fullName":"Anna Ryan"`, `"count":1`},
	"bin/tairseach-mcp call contacts.list limit=2":      {`"id":"c-001"`, `"id":"c-002"`, `"limit":2`},
	"bin/tairseach-mcp doctor":                          {"OK    round trip: server.status answered"},
	`echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_contacts_get","arguments":{"id":"c-007"}}}' | bin/tairseach-mcp`: {`"id":1`, `Anna Ryan`},
	"bin/tairseach-mcp install claude-desktop --print": {`"mcpServers"`, `"tairseach"`, "--manifests=", "--socket="},
	"npx -y @modelcontextprotocol/inspector@":          {`"tairseach_contacts_get"`},
}

// TestReadmeTry runs the README's "Try it without the app" as written, in
// one bash, as a reader pastes it: the built binaries stand in for make
// build, the socket is moved into a temporary directory, and the Inspector
// line runs the pinned copy in scripts/node_modules (the version the README
// names must be that one). Every command must exit 0 and print what the
// README says it does; the demo backend must stop at kill %1.
func TestReadmeTry(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	lines := readmeBlock(t, "Try it without the app")
	sock := filepath.Join(shortDir(t), "demo.sock")
	binDir := filepath.Dir(bridgeBin)
	home := t.TempDir()

	var pinned string
	pkg, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var deps struct{ Dependencies map[string]string }
	if err := json.Unmarshal(pkg, &deps); err != nil {
		t.Fatal(err)
	}
	pinned = deps.Dependencies["@modelcontextprotocol/inspector"]
	inspector := filepath.Join(repoRoot, "scripts", "node_modules", ".bin", "inspector")
	_, inspectorErr := os.Stat(inspector)

	stripComment := regexp.MustCompile(`\s+# [^'"]*$`)
	var script strings.Builder
	script.WriteString("cd \"$REPO\"\n")
	var cmds []string // the commands checked, in order
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		cmd := stripComment.ReplaceAllString(l, "")
		run := strings.ReplaceAll(cmd, "/tmp/tairseach-demo.sock", sock)
		run = strings.ReplaceAll(run, "bin/tairseach-", binDir+"/tairseach-")
		switch {
		case cmd == "make build":
			continue
		case strings.HasSuffix(cmd, "&"):
			// Started in the background; the next line waits for its socket
			// as a reader's typing would.
			fmt.Fprintf(&script, "%s\nfor i in $(seq 200); do [ -S %q ] && break; sleep 0.05; done\n", run, sock)
			continue
		case strings.HasPrefix(cmd, "export "), strings.HasPrefix(cmd, "kill "):
			fmt.Fprintf(&script, "%s || { echo \"@@ failed: %s\"; exit 1; }\n", run, cmd)
			continue
		case strings.HasPrefix(cmd, "npx -y @modelcontextprotocol/inspector@"):
			v, _, _ := strings.Cut(strings.TrimPrefix(cmd, "npx -y @modelcontextprotocol/inspector@"), " ")
			if v != pinned {
				t.Errorf("the README runs MCP Inspector %s; scripts/package.json pins %s", v, pinned)
			}
			if inspectorErr != nil {
				t.Logf("skipping the Inspector line: %v (`make test` installs it)", inspectorErr)
				continue
			}
			run = strings.Replace(run, "npx -y @modelcontextprotocol/inspector@"+v, inspector, 1)
		}
		key := ""
		for k := range readmeTryWants {
			if cmd == k || strings.HasSuffix(k, "@") && strings.HasPrefix(cmd, k) {
				key = k
			}
		}
		if key == "" {
			t.Errorf("README command %q has no expectation in readmeTryWants", cmd)
			continue
		}
		n := len(cmds)
		cmds = append(cmds, key)
		fmt.Fprintf(&script, "echo '@@ begin %d'\n%s\necho \"@@ end %d $?\"\n", n, run, n)
	}
	// kill %1 must have stopped the backend: its socket is removed.
	fmt.Fprintf(&script, "wait\n[ -e %q ] && echo '@@ backend still running'\nexit 0\n", sock)

	cmd := exec.Command("bash", "-c", script.String())
	cmd.Env = append(bridgeEnv(), "HOME="+home, "REPO="+repoRoot, "PATH="+os.Getenv("PATH"))
	var out, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the README's commands did not finish in 2 minutes\nstdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("bash: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
	}
	o := out.String()
	if strings.Contains(o, "@@ failed") || strings.Contains(o, "@@ backend still running") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", o, stderr.String())
	}
	for n, key := range cmds {
		_, rest, ok := strings.Cut(o, fmt.Sprintf("@@ begin %d\n", n))
		body, status, ok2 := strings.Cut(rest, fmt.Sprintf("@@ end %d ", n))
		if !ok || !ok2 {
			t.Errorf("%s: did not run; stdout:\n%s", key, o)
			continue
		}
		if code, _, _ := strings.Cut(status, "\n"); code != "0" {
			t.Errorf("%s: exit status %s; output:\n%s\nstderr:\n%s", key, code, body, stderr.String())
		}
		if strings.TrimSpace(body) == "" {
			t.Errorf("%s: printed nothing", key)
		}
		for _, want := range readmeTryWants[key] {
			if !strings.Contains(body, want) {
				t.Errorf("%s: output lacks %q:\n%s", key, want, body)
			}
		}
	}
}

// TestReadmeLinksAndPins checks the README and docs/ as a reader follows
// them: the README keeps `make demo` and `make test` and links every page
// of docs/ once; every relative link, anchors included, leads somewhere;
// and every npx command names the version scripts/package.json pins, the
// one the tests drive.
func TestReadmeLinksAndPins(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	readme := filepath.Join(repoRoot, "README.md")
	pages := map[string]string{}
	for _, p := range append([]string{readme}, docs...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages[p] = string(b)
	}
	for _, want := range []string{"make demo", "make test", "make try"} {
		if !strings.Contains(pages[readme], want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	for _, d := range docs {
		rel := "docs/" + filepath.Base(d)
		if n := strings.Count(pages[readme], "]("+rel+")"); n != 1 {
			t.Errorf("README.md links %s %d times, want once", rel, n)
		}
	}

	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for p, text := range pages {
		name, _ := filepath.Rel(repoRoot, p)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := p
			if file != "" {
				dest = filepath.Join(filepath.Dir(p), file)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: %v", name, target, err)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			b, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(headingSlugs(string(b)), anchor) {
				t.Errorf("%s: link %s: no such heading", name, target)
			}
		}
	}

	raw, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	npx := regexp.MustCompile(`npx(?:\s+-y)?\s+(@?[a-z0-9@/._-]+)`)
	for p, text := range pages {
		name, _ := filepath.Rel(repoRoot, p)
		for _, m := range npx.FindAllStringSubmatch(text, -1) {
			spec := m[1]
			at := strings.LastIndex(spec, "@")
			if at <= 0 {
				t.Errorf("%s: %q runs whatever npm has newest; pin it (scripts/package.json)", name, m[0])
				continue
			}
			if want, ok := pkg.Dependencies[spec[:at]]; ok && spec[at+1:] != want {
				t.Errorf("%s: %q, but scripts/package.json pins %s", name, m[0], want)
			}
		}
	}
}

// headingSlugs returns the anchors GitHub gives the headings of a Markdown
// text: lowercase, punctuation dropped, spaces as hyphens.
func headingSlugs(text string) []string {
	var slugs []string
	inCode := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slugs = append(slugs, b.String())
	}
	return slugs
}
