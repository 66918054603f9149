package main

// install openclaw over the entry the Tairseach app once wrote under a
// top-level mcpServers, and over JSON5 that install does not edit in place;
// doctor finding that entry. The real OpenClaw reads the results in
// openclaw_test.go.

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// appEntryFile is an OpenClaw file as the app's installer leaves it: its
// entry under mcpServers, which OpenClaw rejects with the whole file, next
// to the user's own settings and comments.
const appEntryFile = `{
  // mine
  "agents": {"defaults": {"workspace": "~/work"}},
  "mcpServers": {
    "tairseach": {
      "type": "stdio",
      "command": "/Applications/Tairseach.app/Contents/MacOS/tairseach-mcp",
      "args": ["--socket=/old.sock"],
      "env": {"TAIRSEACH_LOG_LEVEL": "debug"},
      "disabled": false
    }
  },
  "tools": {"profile": "coding"}, // trailing comma
}
`

func TestInstallOpenClawMovesAppEntry(t *testing.T) {
	for _, tt := range []struct {
		name, before string
		after        []string // in the file after, byte for byte
		gone         []string // not in it
		said         string   // on stderr
	}{
		{
			name:   "app entry",
			before: appEntryFile,
			after: []string{
				"{\n  // mine\n  \"agents\": {\"defaults\": {\"workspace\": \"~/work\"}},\n  \"tools\": {\"profile\": \"coding\"}, // trailing comma\n",
				"\"mcp\": {\n    \"servers\": {\n      \"tairseach\": {\n        \"command\": \"" + exePath(t) + "\",",
				"\"env\": {\n          \"TAIRSEACH_LOG_LEVEL\": \"debug\"\n        }\n",
			},
			gone: []string{"mcpServers", "disabled", "type", "/old.sock"},
		},
		{
			name:   "app entry beside another server",
			before: strings.Replace(appEntryFile, "  \"mcpServers\": {\n", "  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"},\n", 1),
			after:  []string{"  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  },\n"},
			said:   "mcpServers still holds 1 other servers, and OpenClaw rejects the file until they go",
			gone:   []string{"disabled"},
		},
		{
			name:   "an entry where OpenClaw reads it wins",
			before: strings.Replace(appEntryFile, "  \"tools\"", "  \"mcp\": {\"servers\": {\"tairseach\": {\"command\": \"/x\", \"cwd\": \"/tmp\"}}},\n  \"tools\"", 1),
			after:  []string{`"cwd": "/tmp"`},
			gone:   []string{"mcpServers", "TAIRSEACH_LOG_LEVEL"},
			said:   "took the tairseach entry out of mcpServers",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			installHome(t)
			path := configPathOf(t, "openclaw")
			writeFixture(t, path, tt.before)
			stdout, stderr, code := cli("", "--manifests", "/srv/m", "--socket", fixedSocket, "doctor")
			if !strings.Contains(stdout, "FAIL  OpenClaw: "+path+" has the tairseach entry under mcpServers") ||
				!strings.Contains(stdout, "fix: tairseach-mcp install openclaw moves it to mcp.servers.tairseach") {
				t.Errorf("doctor (exit %d) did not find the app's entry:\n%s%s", code, stdout, stderr)
			}

			stdout, stderr, code = cli("", "--manifests", "/srv/m", "--socket", fixedSocket, "install", "openclaw")
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			data, _ := os.ReadFile(path)
			for _, s := range tt.after {
				if !strings.Contains(string(data), s) {
					t.Errorf("the file lacks\n%s\nit reads\n%s", s, data)
				}
			}
			for _, s := range tt.gone {
				if strings.Contains(string(data), s) && (s != "mcpServers" || !strings.Contains(tt.before, `"other"`)) {
					t.Errorf("the file still has %q:\n%s", s, data)
				}
			}
			if entry, _ := entryOf(t, install.Client{Key: "mcp.servers"}, data).(map[string]any); entry["command"] == nil {
				t.Errorf("no entry under mcp.servers:\n%s", data)
			}
			if b, _ := os.ReadFile(path + ".tairseach-backup"); string(b) != tt.before {
				t.Errorf("the backup is not the file before:\n%s", b)
			}
			if !strings.Contains(stderr, tt.said) {
				t.Errorf("install did not say %q:\n%s", tt.said, stderr)
			}
			stdout, stderr, _ = cli("", "--manifests", "/srv/m", "--socket", fixedSocket, "doctor")
			if strings.Contains(stdout, "OpenClaw:") {
				t.Errorf("doctor after the move:\n%s%s", stdout, stderr)
			}
		})
	}
}

// TestInstallOpenClawJSON5 installs into JSON5 beyond comments and
// trailing commas, with no openclaw on PATH: install refuses, changes
// nothing, and names OpenClaw's own command; --print shows it.
func TestInstallOpenClawJSON5(t *testing.T) {
	home := installHome(t)
	t.Setenv("PATH", t.TempDir())
	path := configPathOf(t, "openclaw")
	const before = "{\n  agents: {defaults: {workspace: '~/work'}}, // unquoted, single quotes\n}\n"
	writeFixture(t, path, before)
	args := []string{"--manifests", "/srv/m", "--socket", fixedSocket, "install", "openclaw"}
	want := `printf '%s\n' '{"mcp":{"servers":{"tairseach":{"type":null,"command":"` + exePath(t) + `","args":["--manifests=/srv/m","--socket=` + fixedSocket + `"],"url":null,"transport":null,"headers":null}}}}' | openclaw config patch --stdin`
	stdout, stderr, code := cli("", args...)
	if code != 1 || !strings.Contains(stderr, path+":2:3: ") || !strings.Contains(stderr, "\n  "+want+"\n") {
		t.Errorf("exit %d\n%s%s\nwant the command\n%s", code, stdout, stderr, want)
	}
	stdout, stderr, code = cli("", append(args, "--print")...)
	if code != 0 || stdout != want+"\n" || !strings.Contains(stderr, "--print") {
		t.Errorf("--print: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = cli("", "--config", path, "uninstall", "openclaw")
	if code != 1 || !strings.Contains(stderr, "openclaw mcp unset tairseach") {
		t.Errorf("uninstall: exit %d\n%s%s", code, stdout, stderr)
	}
	if data, _ := os.ReadFile(path); string(data) != before {
		t.Errorf("the file changed:\n%s", data)
	}
	if files, _ := os.ReadDir(filepath.Dir(path)); len(files) != 1 {
		t.Errorf("files beside it: %v", files)
	}

	// doctor cannot read such a file; when it names mcpServers, it says so.
	writeFixture(t, path, "{\n  mcpServers: {tairseach: {command: '/x'}},\n}\n")
	stdout, _, _ = cli("", "--manifests", "/srv/m", "--socket", fixedSocket, "doctor")
	if !strings.Contains(stdout, "WARN  OpenClaw: "+path+" names mcpServers") || !strings.Contains(stdout, "fix: openclaw config validate checks it") {
		t.Errorf("doctor on JSON5 naming mcpServers:\n%s", stdout)
	}

	// Elsewhere than its usual place, OpenClaw is told where the file is.
	other := filepath.Join(home, "my openclaw.json")
	writeFixture(t, other, before)
	_, stderr, _ = cli("", append(slices.Clone(args), "--config", other)...)
	if !strings.Contains(stderr, "}}}}' | OPENCLAW_CONFIG_PATH='"+other+"' openclaw config patch --stdin\n") {
		t.Errorf("--config: %s", stderr)
	}
}

// TestInstallOpenClawJSON5Link: through openclaw config patch (a stand-in
// on PATH that records how it was run), a linked file stays a link,
// OpenClaw being pointed at its target.
func TestInstallOpenClawJSON5Link(t *testing.T) {
	home := installHome(t)
	bin := t.TempDir()
	record := filepath.Join(home, "openclaw-runs")
	script := "#!/bin/sh\necho \"OPENCLAW_CONFIG_PATH=$OPENCLAW_CONFIG_PATH $*\" >> '" + record + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "openclaw"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	path := configPathOf(t, "openclaw")
	const json5 = "{\n  agents: {defaults: {workspace: '~/work'}},\n}\n"
	target := filepath.Join(home, "dotfiles", "openclaw.json")
	writeFixture(t, target, json5)
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := cli("", "--manifests", "/srv/m", "--socket", fixedSocket, "install", "openclaw")
	runs, _ := os.ReadFile(record)
	if code != 0 || string(runs) != "OPENCLAW_CONFIG_PATH="+target+" config patch --stdin\n" {
		t.Errorf("through a link: exit %d\n%s%s\nruns:\n%s", code, stdout, stderr, runs)
	}
	if to, err := os.Readlink(path); err != nil || to != target {
		t.Errorf("the link reads %q, %v", to, err)
	}
}

// A failed openclaw config patch leaves the file and its backups as they were:
// the backup made for it goes, and none of the older ones, however many
// times it is tried; the error says the file is unchanged.
func TestInstallOpenClawFailedSetKeepsBackups(t *testing.T) {
	installHome(t)
	bin := t.TempDir()
	script := "#!/bin/sh\necho 'it broke' >&2; exit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "openclaw"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	path := configPathOf(t, "openclaw")
	const json5 = "{\n  agents: {defaults: {workspace: '~/work'}},\n}\n"
	writeFixture(t, path, json5)
	for n := 1; n <= clientconfig.KeepBackups; n++ {
		writeFixture(t, clientconfig.BackupName(path, n), "precious "+strconv.Itoa(n))
	}
	for range 3 {
		stdout, stderr, code := cli("", "--manifests", "/srv/m", "--socket", fixedSocket, "install", "openclaw")
		if code == 0 || !strings.Contains(stderr, "it broke") || !strings.Contains(stderr, "was left as it was") {
			t.Fatalf("a failing openclaw config patch: exit %d\n%s%s", code, stdout, stderr)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != json5 {
		t.Errorf("the file: %q", got)
	}
	for n := 1; n <= clientconfig.KeepBackups+3; n++ {
		got, err := os.ReadFile(clientconfig.BackupName(path, n))
		if n <= clientconfig.KeepBackups && string(got) != "precious "+strconv.Itoa(n) {
			t.Errorf("backup %d: %q, %v", n, got, err)
		}
		if n > clientconfig.KeepBackups && err == nil {
			t.Errorf("backup %d was made and kept for a change not made", n)
		}
	}
}

// TestInstallOpenClawKeepsValuesOffCommandLines: through OpenClaw's own
// command (a stand-in on PATH that records its arguments and its stdin),
// no value of the entry that install did not write reaches a command line,
// which other users of this machine can read (ps), whatever the member
// holding it is called: install sends only its own members, on stdin, and
// OpenClaw merges them into the entry, which keeps the user's.
func TestInstallOpenClawKeepsValuesOffCommandLines(t *testing.T) {
	home := installHome(t)
	bin := t.TempDir()
	record, stdin, show := filepath.Join(home, "openclaw-runs"), filepath.Join(home, "openclaw-stdin"), filepath.Join(home, "show.json")
	script := "#!/bin/sh\necho \"$*\" >> '" + record + "'\n" +
		"if [ \"$2\" = show ]; then cat '" + show + "'; fi\n" +
		"if [ \"$2\" = patch ]; then cat >> '" + stdin + "'; fi\n"
	if err := os.WriteFile(filepath.Join(bin, "openclaw"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	path := configPathOf(t, "openclaw")
	for _, entry := range []string{
		`{"command":"/old","env":{"MY_API_KEY":"sk-live-env"}}`,
		`{"url":"http://127.0.0.1:1/mcp","headers":{"X-Custom-Auth":"sk-live-header"}}`,
		`{"command":"/old","credentials":"sk-live-member","codex":{"http_headers":{"Authorization":"Bearer sk-live-nested"}}}`,
	} {
		writeFixture(t, path, "{\n  mcp: {servers: {tairseach: "+entry+"}},\n}\n")
		writeFixture(t, show, entry)
		os.Remove(record)
		os.Remove(stdin)
		stdout, stderr, code := cli("", "--manifests", "/srv/m", "--socket", fixedSocket, "install", "openclaw")
		runs, _ := os.ReadFile(record)
		sent, _ := os.ReadFile(stdin)
		if code != 0 || strings.Contains(string(runs), "sk-live") {
			t.Errorf("%s: exit %d\n%s%s\nopenclaw was run with:\n%s", entry, code, stdout, stderr, runs)
		}
		want := `{"mcp":{"servers":{"tairseach":{"type":null,"command":"` + exePath(t) + `","args":["--manifests=/srv/m","--socket=` + fixedSocket + `"],"url":null,"transport":null,"headers":null}}}}`
		if string(runs) != "config patch --stdin\n" || strings.TrimSpace(string(sent)) != want {
			t.Errorf("%s: openclaw was run with\n%s\nand given\n%s\nwant config patch --stdin given\n%s", entry, runs, sent, want)
		}
	}
}
