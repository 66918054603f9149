package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestQuietStartOnTheCorpus: served over stdio at the default log level,
// the real manifests (whose warnings the user cannot fix: a tool without a
// method, ids used by both core/ and integrations/) put nothing on stderr,
// which clients show as errors; --log-level info sums them up in one line,
// and debug names each.
func TestQuietStartOnTheCorpus(t *testing.T) {
	requireCorpus(t)
	sock := fixedSocket
	const in = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}
`
	serve := func(level ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(bridgeBin, append([]string{"--manifests", corpusDir, "--socket", sock}, level...)...)
		cmd.Env = append(bridgeEnv(), "HOME="+t.TempDir())
		cmd.Stdin = strings.NewReader(in)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\nstderr:\n%s", err, errb.String())
		}
		return out.String(), errb.String()
	}

	stdout, stderr := serve()
	if !strings.Contains(stdout, `"id":2,"result":{`) || !strings.Contains(stdout, `"name":"tairseach_contacts_list"`) {
		t.Fatalf("no tools/list answer:\n%.500s", stdout)
	}
	if stderr != "" {
		t.Errorf("at the default level, serving the corpus wrote to stderr:\n%s", stderr)
	}
	_, stderr = serve("--log-level", "info")
	if n := strings.Count(stderr, "19 manifest notes; tairseach-mcp doctor or validate lists them"); n != 1 || strings.Contains(stderr, "WRN") {
		t.Errorf("--log-level info: want one line summing up the 19 notes, no warning:\n%s", stderr)
	}

	_, stderr = serve("--log-level", "debug")
	for _, want := range []string{"tool auth.credentials.rename is not exposed", `manifest id "jira" is also used by core/jira.json`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--log-level debug lacks %q:\n%s", want, stderr)
		}
	}
}
