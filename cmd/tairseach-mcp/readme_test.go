package main

// The README as a reader follows it: every command it shows is run as
// written, here or by the test readmeRunBy names, and its links lead
// somewhere.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
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
	"bin/tairseach-mcp prompts":                         {"find-contact ", "day-plan ", "inbox-summary "},
	`echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_contacts_get","arguments":{"id":"c-007"}}}' | bin/tairseach-mcp`: {`"id":1`, `Anna Ryan`},
	"bin/tairseach-mcp install claude-desktop --print": {`"mcpServers"`, `"tairseach"`, "--manifests=", "--socket="},
	"npx -y @modelcontextprotocol/inspector@":          {`"tairseach_contacts_get"`},
}

// TestReadmeTry runs the README's "Try it without the app" as written, in
// one shell, as a reader pastes it, in bash and in zsh (macOS's shell): the
// socket is moved into a temporary directory, the binaries the tests built
// stand in for make build (which TestReadmeMakeDemo runs), and the
// Inspector line runs the pinned copy in scripts/node_modules (the version
// the README names must be that one). Every command must exit 0 and print
// what the README says it does; the demo backend must stop at kill %1.
func TestReadmeTry(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				t.Skipf("no %s", shell)
			}
			readmeTry(t, shell)
		})
	}
}

func readmeTry(t *testing.T, shell string) {
	lines := readmeBlock(t, "Try it without the app")
	sock := filepath.Join(shortDir(t), "demo.sock")
	binDir := filepath.Dir(bridgeBin)
	home := t.TempDir()

	pinned := pinnedNPM(t)["@modelcontextprotocol/inspector"]
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
			if readmeRunBy[cmd].test == "" {
				t.Errorf("README command %q is not run here; readmeRunBy must name the test that runs it", cmd)
			}
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

	o, stderr := runReadmeScript(t, shell, script.String(), append(bridgeEnv(), "HOME="+home, "REPO="+repoRoot, "PATH="+os.Getenv("PATH")))
	if strings.Contains(o, "@@ failed") || strings.Contains(o, "@@ backend still running") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", o, stderr)
	}
	for n, key := range cmds {
		checkReadmeOutput(t, o, n, key, readmeTryWants[key], stderr)
	}
}

// TestReadmeLinksAndPins checks the README and docs/ as a reader follows
// them: the README keeps `make demo` and `make test` and its Documentation
// list links every page of docs/ once; every relative link, anchors
// included, leads somewhere; and every npx command names the version
// scripts/package.json pins, the one the tests drive.
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
	_, list, _ := strings.Cut(pages[readme], "\n## Documentation\n")
	list, _, _ = strings.Cut(list, "\n## ")
	for _, d := range docs {
		rel := "docs/" + filepath.Base(d)
		if n := strings.Count(list, "- ["+rel+"]("+rel+")"); n != 1 {
			t.Errorf("README.md's Documentation list links %s %d times, want once", rel, n)
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

	pinned := pinnedNPM(t)
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
			if want, ok := pinned[spec[:at]]; ok && spec[at+1:] != want {
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

// readmeCommand is one command the README shows.
type readmeCommand struct {
	heading string // the "## " heading it is under
	run     string // as written, comment dropped; continued lines keep their backslash
	key     string // run on one line, with npx's pinned versions as @PINNED
	prose   bool   // written in the text, as inline code, not in a sh block
}

// readmeCommandPrefixes start the inline code of the README's text that is
// a command to type, not a name or a path.
var readmeCommandPrefixes = []string{"tairseach-mcp ", "bin/tairseach-", "~/.local/bin/", "make ", "npx ", "go ", "git ", "curl "}

// readmeCommands returns the commands of every sh block of the README, and
// those written as inline code in its text, in order. In a block whose
// lines start with "$ ", those are the commands and the other lines what
// they print; in any other block every line that is not blank or a comment
// is one. Table rows are left to readmeClientTable, and the Documentation
// list says what each page is about.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	deps := pinnedNPM(t)
	stripComment := regexp.MustCompile(`\s+# [^'"]*$`)
	continued := regexp.MustCompile(`\\\n\s*`)
	inline := regexp.MustCompile("`([^`]+)`")
	keyOf := func(run string) string {
		key := continued.ReplaceAllString(run, "")
		for name, v := range deps {
			key = strings.ReplaceAll(key, name+"@"+v+" ", name+"@PINNED ")
		}
		return key
	}
	var cmds []readmeCommand
	add := func(heading string, lines []string) {
		prompt := slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "$ ") })
		var cur []string
		for _, l := range lines {
			if prompt {
				if !strings.HasPrefix(l, "$ ") {
					continue
				}
				l = strings.TrimPrefix(l, "$ ")
			}
			l = strings.TrimSpace(stripComment.ReplaceAllString(l, ""))
			if len(cur) == 0 && (l == "" || strings.HasPrefix(l, "#")) {
				continue
			}
			cur = append(cur, l)
			if strings.HasSuffix(l, `\`) {
				continue
			}
			run := strings.Join(cur, "\n")
			cmds = append(cmds, readmeCommand{heading: heading, run: run, key: keyOf(run)})
			cur = nil
		}
	}
	heading := ""
	var block []string
	inBlock, inOther := false, false
	for _, l := range strings.Split(string(raw), "\n") {
		fence := strings.TrimSpace(l)
		switch {
		case inBlock && fence == "```":
			add(heading, block)
			inBlock, block = false, nil
		case inBlock:
			block = append(block, l)
		case inOther:
			inOther = fence != "```"
		case fence == "```sh":
			inBlock = true
		case strings.HasPrefix(fence, "```"):
			inOther = true
		case strings.HasPrefix(l, "## "):
			heading = strings.TrimPrefix(l, "## ")
		case strings.HasPrefix(l, "|"), heading == "Documentation":
		default:
			for _, m := range inline.FindAllStringSubmatch(l, -1) {
				if slices.ContainsFunc(readmeCommandPrefixes, func(p string) bool { return strings.HasPrefix(m[1], p) }) {
					cmds = append(cmds, readmeCommand{heading: heading, run: m[1], key: keyOf(m[1]), prose: true})
				}
			}
		}
	}
	if inBlock || inOther {
		t.Fatal("README: a code block is not closed")
	}
	return cmds
}

// readmeClientTable returns the install commands of the README's table of
// clients, "tairseach-mcp install CLIENT", one per row.
func readmeClientTable(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	install := regexp.MustCompile("(?m)^\\|[^|\\n]*\\| `(tairseach-mcp install [a-z-]+)` \\|")
	var cmds []string
	for _, m := range install.FindAllStringSubmatch(string(raw), -1) {
		cmds = append(cmds, m[1])
	}
	if len(cmds) < 7 {
		t.Fatalf("README: the table of clients has %d install commands, want at least 7", len(cmds))
	}
	return cmds
}

// readmeWalkWants is what each README command TestReadmeCommands runs
// must print on stdout, by its key: the npx version is @PINNED, the one
// scripts/package.json pins. TestReadmeTry checks "Try it without the
// app"; every other README command is here, in readmeRunBy or in
// readmeNotRun.
var readmeWalkWants = map[string][]string{
	// Use it from MCP Inspector, in the demo setup: the variables reach the
	// server only through -e.
	`npx -y @modelcontextprotocol/inspector@PINNED --cli -e TAIRSEACH_MANIFESTS="$TAIRSEACH_MANIFESTS" -e TAIRSEACH_SOCKET="$TAIRSEACH_SOCKET" --method tools/list -- tairseach-mcp`:                                                             {`"name": "tairseach_contacts_search"`, `"name": "tairseach_word_count"`},
	`npx -y @modelcontextprotocol/inspector@PINNED --cli -e TAIRSEACH_MANIFESTS="$TAIRSEACH_MANIFESTS" -e TAIRSEACH_SOCKET="$TAIRSEACH_SOCKET" --method tools/call --tool-name tairseach_contacts_search --tool-arg query=anna -- tairseach-mcp`: {`\"fullName\":\"Anna Ryan\"`, `\"count\":1`},

	// Use it from a shell.
	`echo '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' | tairseach-mcp`:                                                         {`{"jsonrpc":"2.0","id":1,"result":{`, `"name":"tairseach_contacts_list"`},
	`echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_contacts_list","arguments":{"limit":5}}}' | tairseach-mcp`: {`{"jsonrpc":"2.0","id":2,"result":{`, `\"id\":\"c-005\"`, `\"limit\":5`},

	// Resources, prompts and pictures: the demo setup's prompt files.
	"tairseach-mcp prompts":   {"find-contact ", "who*,channel", "day-plan ", "inbox-summary ", "contact-card "},
	"tairseach-mcp resources": {"tairseach://status ", "tairseach://manifests/contacts ", "tairseach://contacts/{id} "},
	`echo '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"find-contact","arguments":{"who":"Anna","channel":"email"}}}' | tairseach-mcp`: {`{"jsonrpc":"2.0","id":1,"result":{`, `Find Anna in my contacts`, `by email`},

	// Serve over HTTP: the server in the background (readmeServe), then
	// mcp-remote as a stdio client drives it (readmeDrive).
	"tairseach-mcp --transport http": {"listening"},
	`npx -y mcp-remote@PINNED http://127.0.0.1:8765/mcp --header "Authorization: Bearer $(cat ~/.tairseach/mcp-token)"`: {`"id":1,"result":{`, `"id":2,"result":{`, `"name":"tairseach_contacts_search"`},

	// Only tools that can work, and Commands.
	"tairseach-mcp doctor":                                  {"OK    manifests directory ", "OK    round trip: server.status answered"},
	"tairseach-mcp tools --all":                             {"tairseach_contacts_delete ", "mcp_expose is false"},
	"tairseach-mcp tools":                                   {"NAME ", " METHOD ", " SOCKET ", " ANNOTATIONS ", "tairseach_contacts_search ", " contacts.search ", "ro !open"},
	"tairseach-mcp call contacts.search query=anna limit=5": {`"fullName":"Anna Ryan"`, `"organization":"Saltmarsh Press"`},
	"tairseach-mcp call contacts.get id=c-001 --raw":        {`{"content":[{"type":"text","text":"{\"id\":\"c-001\"`, `Aoife Byrne`},
	"tairseach-mcp validate -v":                             {"contacts.json:17:15: info: tool contacts.list is exposed as tairseach_contacts_list"},
}

// readmeRunBy names, for each README command not run here, the test that
// runs it, and how.
var readmeRunBy = map[string]struct{ test, how string }{
	"make demo":                 {"TestReadmeMakeDemo", "as written, with BIN= a temporary directory"},
	"make try":                  {"TestReadmeMakeDemo", "as written, with BIN= and its build done"},
	"make build":                {"TestReadmeMakeDemo", "make demo builds first"},
	"make install":              {"TestQuickstart", "into a temporary HOME, its build done (-o build)"},
	"make install BINDIR=~/bin": {"TestReadmeMakeInstallTilde", "in bash and zsh, into a temporary HOME, its build done"},

	"~/.local/bin/tairseach-mcp doctor":                 {"TestQuickstart", "the installed binary against a demo backend in HOME"},
	"~/.local/bin/tairseach-mcp install claude-desktop": {"TestQuickstart", "then starts the entry as Claude Desktop would"},
}

// readmeServe are the README commands that serve until stopped, by the
// address they listen on: the walk starts each in the background, waits
// until it listens, and stops it at the end.
var readmeServe = map[string]string{
	"tairseach-mcp --transport http": "127.0.0.1:8765",
}

// readmeDrive are the README commands that bridge a client on stdin
// until stopped, with what such a client sends: the walk sends it, keeps
// stdin open a while, and reads the first answers.
var readmeDrive = map[string][]string{
	`npx -y mcp-remote@PINNED http://127.0.0.1:8765/mcp --header "Authorization: Bearer $(cat ~/.tairseach/mcp-token)"`: {
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	},
}

// readmeNotRun are the README commands no test runs, each with why and
// how it was checked.
var readmeNotRun = map[string]string{
	"git clone https://github.com/geilt/tairseach-mcp && cd tairseach-mcp": "needs the network and the published repository; the tests run in a checkout of it",
	"make test":            "the suite this test is part of",
	"go test -short ./...": "the suite this test is part of, as -short runs it",
}

// TestReadmeCommands runs the README's commands outside "Try it without
// the app" (TestReadmeTry's) as written, in one bash from the checkout, in
// the demo setup a new user has after that section: tairseach-mcp is the
// built binary, first on PATH; HOME is an empty temporary directory; the
// demo backend serves on a socket of its own, and TAIRSEACH_MANIFESTS,
// TAIRSEACH_SOCKET and TAIRSEACH_PROMPTS are exported as the README has
// them exported. npx runs the copy scripts/node_modules holds of the
// version scripts/package.json pins, and refuses any other. Each
// command must exit 0 and print what readmeWalkWants says; each install
// command of the table of clients runs with --print. A README command, in
// a block or as inline code in the text, that is in none of
// readmeWalkWants, readmeRunBy and readmeNotRun fails the test, as does an
// entry of those the README no longer has, or a test readmeRunBy names
// that does not exist.
func TestReadmeCommands(t *testing.T) {
	var walk []readmeCommand
	seen := map[string]bool{}
	for _, c := range readmeCommands(t) {
		seen[c.key] = true
		if c.heading == "Try it without the app" && !c.prose {
			continue
		}
		_, want := readmeWalkWants[c.key]
		_, by := readmeRunBy[c.key]
		_, not := readmeNotRun[c.key]
		switch {
		case want && by, want && not, by && not:
			t.Errorf("README command %q is in more than one of readmeWalkWants, readmeRunBy and readmeNotRun", c.key)
		case by, not:
		case want:
			if !slices.ContainsFunc(walk, func(w readmeCommand) bool { return w.key == c.key }) {
				walk = append(walk, c)
			}
		default:
			t.Errorf("README command %q (under %q) has no expectation in readmeWalkWants, no test in readmeRunBy, and no reason in readmeNotRun", c.key, c.heading)
		}
	}
	for _, k := range slices.Concat(slices.Collect(maps.Keys(readmeWalkWants)), slices.Collect(maps.Keys(readmeRunBy)), slices.Collect(maps.Keys(readmeNotRun))) {
		if !seen[k] {
			t.Errorf("the README has no command %q", k)
		}
	}
	tests := testFuncs(t)
	for k, by := range readmeRunBy {
		if !tests[by.test] {
			t.Errorf("readmeRunBy: %q is run by %s, which does not exist", k, by.test)
		}
	}
	for _, install := range readmeClientTable(t) {
		walk = append(walk, readmeCommand{heading: "Connect a client", run: install + " --print", key: install + " --print"})
	}
	if t.Failed() {
		return
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	modules := nodeModules(t)

	// The demo setup of "Try it without the app", in a fresh HOME.
	home := shortDir(t)
	sock := filepath.Join(shortDir(t), "demo.sock")
	startBackend(t, sock)

	// PATH: tairseach-mcp is the built binary; npx runs the pinned copies.
	bin := t.TempDir()
	if err := os.Symlink(bridgeBin, filepath.Join(bin, "tairseach-mcp")); err != nil {
		t.Fatal(err)
	}
	deps := pinnedNPM(t)
	var shim strings.Builder
	shim.WriteString("#!/bin/sh\n# npx, offline: only the versions scripts/package.json pins, from scripts/node_modules\n[ \"$1\" = -y ] && shift\nspec=$1\nshift\ncase $spec in\n")
	for _, name := range slices.Sorted(maps.Keys(deps)) {
		exe := filepath.Join(modules, ".bin", name[strings.LastIndex(name, "/")+1:])
		fmt.Fprintf(&shim, "%q) exec %q \"$@\" ;;\n", name+"@"+deps[name], exe)
	}
	shim.WriteString("*) echo \"npx: $spec is not pinned in scripts/package.json\" >&2; exit 127 ;;\nesac\n")
	if err := os.WriteFile(filepath.Join(bin, "npx"), []byte(shim.String()), 0o755); err != nil {
		t.Fatal(err)
	}

	// A server on a fixed address needs it free.
	for _, addr := range readmeServe {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("not running the HTTP server and its clients: %s is in use: %v", addr, err)
			walk = slices.DeleteFunc(walk, func(c readmeCommand) bool {
				_, serve := readmeServe[c.key]
				_, drive := readmeDrive[c.key]
				return serve || drive
			})
			break
		}
		ln.Close()
	}

	errs := t.TempDir()
	var script strings.Builder
	script.WriteString("set -o pipefail\ncd \"$REPO\"\nservers=\n")
	fmt.Fprintf(&script, "export TAIRSEACH_MANIFESTS=$PWD/manifests.example TAIRSEACH_SOCKET=%s TAIRSEACH_PROMPTS=$PWD/manifests.example/prompts\n", sock)
	for n, c := range walk {
		errFile := filepath.Join(errs, fmt.Sprint(n))
		if addr, ok := readmeServe[c.key]; ok {
			host, port, _ := net.SplitHostPort(addr)
			// Not in braces: $! is the server itself, for kill.
			fmt.Fprintf(&script, "echo '@@ begin %d'\n%s 2>%q &\nservers=\"$servers $!\"\n", n, c.run, errFile)
			fmt.Fprintf(&script, "for i in $(seq 200); do (exec 3<>/dev/tcp/%s/%s) 2>/dev/null && break; sleep 0.05; done\n", host, port)
			fmt.Fprintf(&script, "(exec 3<>/dev/tcp/%s/%s) 2>/dev/null && echo listening; echo \"@@ end %d $?\"\n", host, port, n)
			continue
		}
		if in, ok := readmeDrive[c.key]; ok {
			// As a client does, the rest is sent once initialize (the
			// first) is answered: a proxy such as mcp-remote learns the
			// session from that answer. The answers are read until the
			// last request's; stdin stays open until then (at most 40 s).
			// They are read by bash's read, a line as it comes: mawk, the
			// awk of Debian, reads a pipe in blocks, and saw the answers
			// only at the end, when each wait had run its 40 s.
			first, done := errFile+".first", errFile+".done"
			fmt.Fprintf(&script, "echo '@@ begin %d'\n{ printf '%%s\\n' %s; for i in $(seq 400); do [ -e %q ] && break; sleep 0.1; done; "+
				"printf '%%s\\n' %s; for i in $(seq 400); do [ -e %q ] && break; sleep 0.1; done; } | {\n%s\n} 2>%q |\n"+
				"  while IFS= read -r line; do printf '%%s\\n' \"$line\"; case $line in *'\"id\":%s,'*) touch %q ;; esac; case $line in *'\"id\":%s,'*) touch %q; break ;; esac; done\n"+
				"echo \"@@ end %d ${PIPESTATUS[2]}\"\n",
				n, shellWords(in[:1]), first, shellWords(in[1:]), done, c.run, errFile, lastID(in[:1]), first, lastID(in), done, n)
			continue
		}
		fmt.Fprintf(&script, "echo '@@ begin %d'\n{\n%s\n} 2>%q\necho \"@@ end %d $?\"\n", n, c.run, errFile, n)
	}
	script.WriteString("[ -z \"$servers\" ] || kill $servers\n")
	env := append(bridgeEnv(), "HOME="+home, "REPO="+repoRoot, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "npm_config_offline=true")
	o, stderr := runReadmeScript(t, "bash", script.String(), env)
	for n, c := range walk {
		want, ok := readmeWalkWants[c.key]
		if !ok { // an install of the table of clients
			want = []string{"tairseach"}
		}
		cmdErr, _ := os.ReadFile(filepath.Join(errs, fmt.Sprint(n)))
		checkReadmeOutput(t, o, n, c.key, want, string(cmdErr)+stderr)
	}
}

// shellWords quotes each of words for a POSIX shell, separated by spaces.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// lastID is the id of the last JSON-RPC request of lines, as written.
func lastID(lines []string) string {
	id := ""
	for _, l := range lines {
		var m struct{ ID json.RawMessage }
		if json.Unmarshal([]byte(l), &m) == nil && m.ID != nil {
			id = string(m.ID)
		}
	}
	return id
}

// testFuncs returns the names of the Test functions of this package.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("*_test.go: %v", err)
	}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	names := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
	}
	return names
}

// TestReadmeMakeDemo runs the README's first command, make demo, as a new
// user does, build included, and make try after it; the binaries go to a
// temporary BIN instead of the checkout's bin/. Then the fix doctor gives
// for a missing socket must name a command the README has and a test runs.
func TestReadmeMakeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := t.TempDir()
	for _, tt := range []struct {
		args  []string
		wants []string
	}{
		// The command lines it shows are those it runs, every flag.
		{[]string{"demo", "BIN=" + bin}, []string{"== tools/list", "tairseach_contacts_search", `"fullName": "Aoife Byrne"`,
			"running under the demo client, which starts it as Claude Desktop would: " + bin + "/tairseach-mcp --manifests manifests.example --prompts-dir manifests.example/prompts --socket ",
			` --log-level warn` + "\n", `"arguments":{"id":"c-001"}}}' | ` + bin + "/tairseach-mcp --manifests manifests.example --socket ",
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"id\":\"c-001\"`, "demo finished; the backend is stopped"}},
		{[]string{"-o", "build", "try", "BIN=" + bin}, []string{"tairseach_screen_capture", "screen_recording", `"fullName":"Anna Ryan"`,
			"the backend is stopped"}},
	} {
		b, err := runScript(t, nil, "make", tt.args...)
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(tt.args, " "), err, b)
		}
		for _, want := range tt.wants {
			if !strings.Contains(string(b), want) {
				t.Errorf("make %s does not say %q:\n%s", strings.Join(tt.args, " "), want, b)
			}
		}
	}

	// The fix for a missing socket: make demo, which the README shows.
	stdout, _, _ := cli("", "--manifests", exampleDir, "--socket", filepath.Join(shortDir(t), "none.sock"), "doctor")
	fix := regexp.MustCompile(`(?m)^FAIL  socket .* does not exist; fix: .*\brun (make \w+)`).FindStringSubmatch(stdout)
	if fix == nil {
		t.Fatalf("doctor names no make target to run for a missing socket:\n%s", stdout)
	}
	if readmeRunBy[fix[1]].test != t.Name() {
		t.Errorf("doctor's fix runs %q, which the README does not show or this test does not run", fix[1])
	}
}

// TestReadmeMakeInstallTilde runs the README's make install BINDIR=~/bin as
// written in bash and in zsh, macOS's shell, which passes the ~ to make as
// it is (it expands ~ after = only in an assignment): the binary lands in
// HOME/bin, not in a directory named ~ in the checkout. Where zsh is not
// installed, make gets the literal ~ directly, as zsh passes it.
func TestReadmeMakeInstallTilde(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	const line = "make install BINDIR=~/bin"
	if !slices.ContainsFunc(readmeCommands(t), func(c readmeCommand) bool { return c.key == line }) {
		t.Fatalf("the README has no %q", line)
	}
	tilde := filepath.Join(repoRoot, "~")
	if _, err := os.Lstat(tilde); err == nil {
		t.Fatalf("%s exists before the test; remove it", tilde)
	}
	t.Cleanup(func() { os.RemoveAll(tilde) })
	// As written, its build left out (-o build): the binary TestMain built
	// stands in for bin/tairseach-mcp.
	run := strings.Replace(line, "make ", "make -o build BIN="+filepath.Dir(bridgeBin)+" ", 1)
	for _, shell := range []string{"bash", "zsh", ""} {
		name := shell
		if shell == "" {
			name = "no shell"
		}
		t.Run(name, func(t *testing.T) {
			var cmd *exec.Cmd
			switch {
			case shell == "":
				cmd = exec.Command("make", strings.Fields(run)[1:]...)
			default:
				if _, err := exec.LookPath(shell); err != nil {
					t.Skipf("no %s", shell)
				}
				cmd = exec.Command(shell, "-c", run)
			}
			home := shortDir(t)
			cmd.Dir = repoRoot
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
			out, err := cmd.CombinedOutput()
			if _, statErr := os.Lstat(tilde); statErr == nil {
				t.Errorf("make install made %s in the checkout", tilde)
			}
			want := filepath.Join(home, "bin", "tairseach-mcp")
			if fi, statErr := os.Stat(want); err != nil || statErr != nil || fi.Mode().Perm() != 0o755 || !strings.Contains(string(out), "installed "+want) {
				t.Errorf("%s: %v, %v\n%s", run, err, statErr, out)
			}
		})
	}
}

// TestReadmeGoVersion: the Go the README and docs/ ask for is the one
// go.mod needs.
func TestReadmeGoVersion(t *testing.T) {
	mod := readFile(t, filepath.Join(repoRoot, "go.mod"))
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	want := string(m[1])
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	asks := regexp.MustCompile(`Go ≥ ?([0-9][0-9.]*[0-9])`)
	for _, p := range append([]string{filepath.Join(repoRoot, "README.md")}, docs...) {
		found := asks.FindAllSubmatch(readFile(t, p), -1)
		name, _ := filepath.Rel(repoRoot, p)
		if name == "README.md" && len(found) == 0 {
			t.Errorf("README.md does not say which Go it needs (Go ≥ %s)", want)
		}
		for _, f := range found {
			if string(f[1]) != want {
				t.Errorf("%s asks for Go ≥ %s; go.mod needs %s", name, f[1], want)
			}
		}
	}
}

// runReadmeScript runs script in shell with env and returns its stdout and
// stderr, failing the test if the shell fails or takes over 2 minutes.
func runReadmeScript(t *testing.T, shell, script string, env []string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(shell, "-c", script)
	cmd.Env = env
	// In a process group of its own, killed whole when it ends, so that
	// nothing it started outlives the test holding its output.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(t, cmd.Process.Pid) })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("the README's commands did not finish in 2 minutes\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", shell, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// checkReadmeOutput checks the n-th command of a script's stdout o,
// between "@@ begin n" and "@@ end n STATUS": it exited 0 and printed every
// string of wants.
func checkReadmeOutput(t *testing.T, o string, n int, name string, wants []string, stderr string) {
	t.Helper()
	_, rest, ok := strings.Cut(o, fmt.Sprintf("@@ begin %d\n", n))
	body, status, ok2 := strings.Cut(rest, fmt.Sprintf("@@ end %d ", n))
	if !ok || !ok2 {
		t.Errorf("%s: did not run; stdout:\n%s", name, o)
		return
	}
	if code, _, _ := strings.Cut(status, "\n"); code != "0" {
		t.Errorf("%s: exit status %s; output:\n%s\nstderr:\n%s", name, code, body, stderr)
	}
	if strings.TrimSpace(body) == "" {
		t.Errorf("%s: printed nothing", name)
	}
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("%s: output lacks %q:\n%s", name, want, body)
		}
	}
}

// pinnedNPM is the npm packages scripts/package.json pins, name → version:
// the clients the tests drive.
func pinnedNPM(t *testing.T) map[string]string {
	t.Helper()
	pkg, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var deps struct{ Dependencies map[string]string }
	if err := json.Unmarshal(pkg, &deps); err != nil {
		t.Fatal(err)
	}
	return deps.Dependencies
}
