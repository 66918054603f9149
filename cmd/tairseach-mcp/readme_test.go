package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
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
	"bin/tairseach-mcp prompts":                         {"find-contact ", "day-plan ", "inbox-summary "},
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

	o, stderr := runReadmeScript(t, script.String(), append(bridgeEnv(), "HOME="+home, "REPO="+repoRoot, "PATH="+os.Getenv("PATH")))
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

// readmeCommand is one command of a sh block of the README.
type readmeCommand struct {
	heading string // the "## " heading the block is under
	run     string // as written, comment dropped; continued lines keep their backslash
	key     string // run on one line, with npx's pinned versions as @PINNED
}

// readmeCommands returns the commands of every sh block of the README, in
// order. In a block whose lines start with "$ ", those are the commands and
// the other lines what they print; in any other block every line that is
// not blank or a comment is one.
func readmeCommands(t *testing.T) []readmeCommand {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	deps := pinnedNPM(t)
	stripComment := regexp.MustCompile(`\s+# [^'"]*$`)
	continued := regexp.MustCompile(`\\\n\s*`)
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
			key := continued.ReplaceAllString(run, "")
			for name, v := range deps {
				key = strings.ReplaceAll(key, name+"@"+v+" ", name+"@PINNED ")
			}
			cmds = append(cmds, readmeCommand{heading: heading, run: run, key: key})
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
		}
	}
	if inBlock || inOther {
		t.Fatal("README: a code block is not closed")
	}
	return cmds
}

// readmeWalkWants is what each README command TestReadmeCommands runs
// must print on stdout, by its key: the npx version is @PINNED, the one
// scripts/package.json pins. TestReadmeTry checks "Try it without the
// app"; every other README command is here or in readmeNotWalked.
var readmeWalkWants = map[string][]string{
	// Use it from Claude Desktop and other clients: into HOME, a temporary
	// directory (~/.config/Claude on Linux).
	"tairseach-mcp install claude-desktop": {"added the tairseach entry in ", "claude_desktop_config.json", "quit Claude Desktop and open it again to load it"},

	// Use it from MCP Inspector. The Inspector starts the server without the
	// TAIRSEACH_* variables, so these find the manifests and the backend
	// where the app keeps them, in HOME.
	"npx -y @modelcontextprotocol/inspector@PINNED --cli --method tools/list -- tairseach-mcp":                                                             {`"name": "tairseach_contacts_search"`, `"name": "tairseach_word_count"`},
	"npx -y @modelcontextprotocol/inspector@PINNED --cli --method tools/call --tool-name tairseach_contacts_search --tool-arg query=anna -- tairseach-mcp": {`\"fullName\":\"Anna Ryan\"`, `\"count\":1`},
	"npx -y @modelcontextprotocol/inspector@PINNED --cli --method tools/list -- tairseach-mcp --manifests ./manifests.example":                             {`"name": "tairseach_contacts_get"`, `"name": "tairseach_server_status"`},

	// Use it from a shell.
	`echo '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}' | tairseach-mcp`:                                                         {`{"jsonrpc":"2.0","id":1,"result":{`, `"name":"tairseach_contacts_list"`},
	`echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_contacts_list","arguments":{"limit":5}}}' | tairseach-mcp`: {`{"jsonrpc":"2.0","id":2,"result":{`, `\"id\":\"c-005\"`, `\"limit\":5`},

	// Commands. The README shows doctor on a Mac without the app running
	// (a FAIL, exit status 1); against the demo backend every check is OK.
	"tairseach-mcp tools": {"NAME ", " METHOD ", " SOCKET ", " FILE ", " ANNOTATIONS ", " OUTPUT", "tairseach_contacts_search ", " contacts.search ", "ro !open"},
	`tairseach-mcp tools --all --json | jq -r '.[] | select(.exposed | not) | "\(.name): \(.reason)"'`: {"tairseach_contacts_delete: hidden: mcp_expose is false"},
	"tairseach-mcp call contacts.search query=anna limit=5":                                            {`"fullName":"Anna Ryan"`, `"organization":"Saltmarsh Press"`},
	`tairseach-mcp call tairseach_contacts_list '{"limit": 2}'`:                                        {`"id":"c-001"`, `"id":"c-002"`, `"limit":2`},
	"tairseach-mcp call contacts.get id=c-001 --raw":                                                   {`{"content":[{"type":"text","text":"{\"id\":\"c-001\"`, `Aoife Byrne`},
	"tairseach-mcp doctor": {"OK    manifests directory ", "OK    round trip: server.status answered"},

	// Resources, prompts and pictures: the demo setup's prompt files.
	"tairseach-mcp prompts":   {"find-contact ", "who*,channel", "day-plan ", "inbox-summary ", "contact-card "},
	"tairseach-mcp resources": {"tairseach://status ", "tairseach://manifests/contacts ", "tairseach://contacts/{id} "},
	`echo '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"find-contact","arguments":{"who":"Anna","channel":"email"}}}' | tairseach-mcp`: {`{"jsonrpc":"2.0","id":1,"result":{`, `Find Anna in my contacts`, `by email`},
}

// readmeNotWalked are the README commands TestReadmeCommands leaves alone,
// each with why.
var readmeNotWalked = map[string]string{
	// Quickstart: a clone on a Mac with the app; TestQuickstart runs the same
	// steps with make install into a temporary HOME.
	"git clone https://github.com/geilt/tairseach-mcp && cd tairseach-mcp": "needs the network; the tests run in a checkout",
	"make install":                                                       "TestQuickstart runs it (without the build, which TestMain has done)",
	"~/.local/bin/tairseach-mcp doctor":                                  "the installed binary against the app; TestQuickstart runs it, and doctor is walked under Commands",
	"~/.local/bin/tairseach-mcp install claude-desktop":                  "the installed binary; TestQuickstart runs it, and it is walked under \"Use it from Claude Desktop and other clients\"",
	"grep ' tairseach-mcp-1.2.3.mcpb$' checksums.txt | shasum -a 256 -c": "needs a published release; TestDist checks the checksums.txt make dist writes",

	// Two commands: make test is what runs this test; make demo builds and
	// runs scripts/demo.sh, a few minutes on 2 cores.
	"make demo": "builds and runs the whole demo; not from within make test",
	"make test": "runs this test",

	// Install.
	"CGO_ENABLED=0 go install github.com/geilt/tairseach-mcp/cmd/tairseach-mcp@latest": "needs the network (the Go module proxy) and writes to GOPATH/bin",
	"make build":                    "the test builds the binaries itself (TestMain)",
	"make build GOTAGS=notelemetry": "a second build of the same binaries; make lint vets the tag",
	"make dist":                     "several minutes on 2 cores; TestDist runs scripts/dist.sh for three of the four platforms",

	// Serve over HTTP: servers that run until stopped; http_test.go drives
	// them, and TestMCPRemoteWithoutTokenFailsFast mcp-remote.
	"tairseach-mcp --transport http":                      "a server that runs until stopped, on a fixed port",
	"tairseach-mcp --transport http --listen 127.0.0.1:0": "a server that runs until stopped",
	`npx -y mcp-remote@PINNED http://127.0.0.1:8765/mcp --header "Authorization: Bearer $(cat ~/.tairseach/mcp-token)"`: "needs the HTTP server above, and then bridges until stopped",

	// Commands: completion changes the reader's shell; TestCompletion checks the scripts.
	"source <(tairseach-mcp completion bash)":                     "changes the reader's own shell",
	`tairseach-mcp completion zsh > "${fpath[1]}/_tairseach-mcp"`: "needs zsh, and writes into its $fpath",
}

// TestReadmeCommands runs the README's commands outside "Try it without
// the app" (TestReadmeTry's) as written, in one bash from the checkout,
// against the demo backend: tairseach-mcp is the built binary, first on
// PATH; HOME is a temporary directory laid out as the app lays it out
// (~/.tairseach/manifests holding manifests.example, the backend on
// ~/.tairseach/tairseach.sock), and TAIRSEACH_MANIFESTS and
// TAIRSEACH_SOCKET name the same; npx runs the copy scripts/node_modules
// holds of the version scripts/package.json pins, and refuses any other
// (npm itself is told to stay offline). Each command must exit 0 and print what readmeWalkWants says. A
// README command that is neither there nor in readmeNotWalked fails the
// test, as does an entry of either that the README no longer has.
func TestReadmeCommands(t *testing.T) {
	var walk []readmeCommand
	seen := map[string]bool{}
	for _, c := range readmeCommands(t) {
		if c.heading == "Try it without the app" {
			continue
		}
		seen[c.key] = true
		_, want := readmeWalkWants[c.key]
		_, skip := readmeNotWalked[c.key]
		switch {
		case want && skip:
			t.Errorf("README command %q is both walked and not walked", c.key)
		case skip:
		case want:
			walk = append(walk, c)
		default:
			t.Errorf("README command %q (under %q) has no expectation in readmeWalkWants, nor a reason in readmeNotWalked", c.key, c.heading)
		}
	}
	for k := range readmeWalkWants {
		if !seen[k] {
			t.Errorf("readmeWalkWants: the README has no command %q", k)
		}
	}
	for k := range readmeNotWalked {
		if !seen[k] {
			t.Errorf("readmeNotWalked: the README has no command %q", k)
		}
	}
	if t.Failed() {
		return
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	modules := nodeModules(t)

	// HOME as the app leaves it, with the demo backend for the app.
	home := shortDir(t)
	if err := os.CopyFS(filepath.Join(home, ".tairseach", "manifests"), os.DirFS(filepath.Join(repoRoot, "manifests.example"))); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(home, ".tairseach", "tairseach.sock")
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

	_, jqErr := exec.LookPath("jq")
	errs := t.TempDir()
	var script strings.Builder
	script.WriteString("set -o pipefail\ncd \"$REPO\"\n")
	var ran []readmeCommand // the commands checked, in order
	for _, c := range walk {
		if jqErr != nil && strings.Contains(c.key, "| jq ") {
			t.Logf("not running %q: jq is not installed", c.key)
			continue
		}
		n := len(ran)
		ran = append(ran, c)
		fmt.Fprintf(&script, "echo '@@ begin %d'\n{\n%s\n} 2>%q\necho \"@@ end %d $?\"\n", n, c.run, filepath.Join(errs, fmt.Sprint(n)), n)
	}

	env := append(bridgeEnv(), "HOME="+home, "REPO="+repoRoot, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TAIRSEACH_MANIFESTS=manifests.example", "TAIRSEACH_SOCKET="+sock, "TAIRSEACH_PROMPTS=manifests.example/prompts", "npm_config_offline=true")
	o, stderr := runReadmeScript(t, script.String(), env)
	for n, c := range ran {
		cmdErr, _ := os.ReadFile(filepath.Join(errs, fmt.Sprint(n)))
		checkReadmeOutput(t, o, n, c.key, readmeWalkWants[c.key], string(cmdErr)+stderr)
	}
}

// runReadmeScript runs script in bash with env and returns its stdout and
// stderr, failing the test if bash fails or takes over 2 minutes.
func runReadmeScript(t *testing.T, script string, env []string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = env
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the README's commands did not finish in 2 minutes\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if err != nil {
		t.Fatalf("bash: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
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
