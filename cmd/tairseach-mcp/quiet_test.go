package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/mcpserver/resources"
)

// TestQuietStartOnTheCorpus: served over stdio at the default log level,
// the real manifests (whose warnings the user cannot fix: a tool without a
// method, ids used by both core/ and integrations/) put nothing on stderr,
// which clients show as errors; --log-level info sums them up in one line,
// and debug names each; tairseach://status lists them.
func TestQuietStartOnTheCorpus(t *testing.T) {
	requireCorpus(t)
	sock := fixedSocket
	const in = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}
{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"tairseach://status"}}
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
	// The status resource has them.
	var st resources.Status
	for _, l := range strings.Split(stdout, "\n") {
		var m struct {
			ID     int
			Result struct{ Contents []struct{ Text string } }
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.ID == 3 && len(m.Result.Contents) == 1 {
			if err := json.Unmarshal([]byte(m.Result.Contents[0].Text), &st); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(st.Notes) != 4 || !slices.Contains(st.Notes, `integrations/jira.json: warning: manifest id "jira" is also used by core/jira.json`) {
		t.Errorf("tairseach://status's manifestNotes: %q", st.Notes)
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
