package main

// End-to-end tests of what a tool call returns: the size of the message the
// client reads (--max-result-bytes), and the outputSchema policy against the
// replies the real Tairseach server gives, through the real binary, the demo
// backend and real clients (the TypeScript SDK, MCP Inspector, the go-sdk
// over HTTP).

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realShapesEnv serves testdata/realshapes: tools copied from the corpus
// with their own outputSchemas, on demo methods that answer like the real
// server, and demo.huge.
func realShapesEnv(t *testing.T) env {
	t.Helper()
	e := newEnv(t)
	e.manifests = filepath.Join(repoRoot, "cmd", "tairseach-mcp", "testdata", "realshapes")
	startBackend(t, e.socket)
	return e
}

// tsCall is one call of scripts/ts-calls.mjs and what it saw.
type tsCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

type tsResult struct {
	IsError    bool   `json:"isError"`
	TextBytes  int    `json:"textBytes"`
	Text       string `json:"text"`
	Structured bool   `json:"structured"`
	Thrown     string `json:"thrown"`
}

// tsCalls makes calls one after another in one session of the TypeScript
// SDK client and returns what it saw of each; it fails the test on a
// transport error (such as a message over the client's 10 MiB buffer).
func tsCalls(t *testing.T, e env, calls []tsCall, extra ...string) []tsResult {
	t.Helper()
	nodeModules(t)
	b, _ := json.Marshal(calls)
	args := append([]string{"ts-calls.mjs", string(b), bridgeBin}, e.args(append([]string{"--log-level", "warn"}, extra...)...)...)
	stdout, stderr, code := runNode(t, 180*time.Second, "node", args...)
	var out struct {
		Results         []tsResult
		TransportErrors []string
	}
	if code != 0 || json.Unmarshal([]byte(lastLine(stdout)), &out) != nil || len(out.Results) != len(calls) {
		t.Fatalf("ts-calls.mjs: exit %d\nstdout:\n%.3000s\nstderr:\n%.3000s", code, stdout, stderr)
	}
	if len(out.TransportErrors) > 0 {
		t.Fatalf("the TypeScript client's transport failed: %v\nstderr:\n%.3000s", out.TransportErrors, stderr)
	}
	return out.Results
}

// TestE2EMessageSizeTypeScriptClient checks --max-result-bytes against the
// TypeScript SDK client, which drops the whole stdio session on a message
// over 10 MiB: results whose message would be too large (2 MB of "<", six
// times that once escaped; 8 MiB of "<"; a 5 MiB object sent twice, as text
// and structuredContent, under strict; an 8 MiB error object) are isError
// results naming the size and the limit, those that fit arrive whole, and
// the session goes on.
func TestE2EMessageSizeTypeScriptClient(t *testing.T) {
	e := realShapesEnv(t)
	const limit = "over the limit of 8388608 (--max-result-bytes)"
	huge := func(args map[string]any) tsCall { return tsCall{"tairseach_demo_huge", args} }
	status := tsCall{"tairseach_server_status", map[string]any{}}
	type want struct {
		tooLarge string // "" when the result must arrive
		bytes    int    // the least text an arriving result has
	}
	for _, tt := range []struct {
		flag  string
		calls []tsCall
		want  []want
	}{
		{"--output-schemas=warn", []tsCall{
			huge(map[string]any{"bytes": 2_000_000, "char": "<"}), status,
			huge(map[string]any{"kind": "object", "bytes": 5 << 20}), status,
			huge(map[string]any{"bytes": 8 << 20, "char": "<"}), status,
			huge(map[string]any{"kind": "error", "bytes": 8 << 20}), status,
			huge(map[string]any{"bytes": 7 << 20}), status,
		}, []want{
			{"result too large", 0}, {"", 10},
			{"", 5 << 20}, {"", 10},
			{"result too large", 0}, {"", 10},
			{"the error demo.huge returned is too large to send", 0}, {"", 10},
			{"", 7 << 20}, {"", 10},
		}},
		{"--output-schemas=strict", []tsCall{
			huge(map[string]any{"kind": "object", "bytes": 5 << 20}), status,
			huge(map[string]any{"kind": "object", "bytes": 3 << 20}), status,
		}, []want{
			{"result too large", 0}, {"", 10},
			{"", 3 << 20}, {"", 10},
		}},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			got := tsCalls(t, e, tt.calls, tt.flag, "--result-budget", "off") // the message limit, whole results
			for i, r := range got {
				w := tt.want[i]
				what := fmt.Sprintf("call %d (%s %v)", i, tt.calls[i].Name, tt.calls[i].Arguments)
				switch {
				case r.Thrown != "":
					t.Errorf("%s: the client raised %s", what, r.Thrown)
				case w.tooLarge != "":
					if !r.IsError || !strings.Contains(r.Text, w.tooLarge) || !strings.Contains(r.Text, limit) || !strings.Contains(r.Text, "would make a message of ") {
						t.Errorf("%s: isError %v, %q; want %q naming the size and %q", what, r.IsError, r.Text, w.tooLarge, limit)
					}
				default:
					if r.IsError || r.TextBytes < w.bytes {
						t.Errorf("%s: isError %v, %d bytes (%.300s); want a result of at least %d bytes", what, r.IsError, r.TextBytes, r.Text, w.bytes)
					}
				}
			}
		})
	}
}

// TestE2EMessageSizeHTTP checks the same limit on the go-sdk's path, over
// HTTP, for a result and for an error object.
func TestE2EMessageSizeHTTP(t *testing.T) {
	e := realShapesEnv(t)
	b := startHTTP(t, e, "--max-result-bytes", "1000000", "--result-budget", "off")
	cs := connectHTTP(t, b.url, "2025-11-25", nil, nil)
	for _, args := range []map[string]any{
		{"bytes": 200_000, "char": "<"},
		{"kind": "error", "bytes": 1_000_000},
		{"kind": "object", "bytes": 2_000_000},
	} {
		res := callTool(t, cs, "tairseach_demo_huge", args)
		if !res.IsError || !strings.Contains(text(res), "over the limit of 1000000 (--max-result-bytes)") {
			t.Errorf("%v: isError %v, %.300q", args, res.IsError, text(res))
		}
	}
	res := callTool(t, cs, "tairseach_demo_huge", map[string]any{"bytes": 900_000})
	if res.IsError || len(text(res)) < 900_000 {
		t.Errorf("a result that fits: isError %v, %d bytes", res.IsError, len(text(res)))
	}
}

// realShapeCalls are successful calls whose replies, shaped as the real
// server's, do not match the outputSchemas of the corpus manifests.
var realShapeCalls = []tsCall{
	{"tairseach_calendar_updateEvent", map[string]any{"id": "E1", "title": "Retro"}},
	{"tairseach_calendar_deleteEvent", map[string]any{"id": "E1"}},
	{"tairseach_op_vaults_list", map[string]any{}},
}

// TestE2ERealShapesTypeScriptClient checks that with the default flags the
// real server's replies reach the TypeScript SDK client as the successes
// they are, although the corpus's outputSchemas do not describe them, and
// that --output-schemas=strict makes each an isError naming the mismatch.
func TestE2ERealShapesTypeScriptClient(t *testing.T) {
	e := realShapesEnv(t)
	wantText := []string{`"updated":true`, `"deleted":true`, `[{"id":"v-private"`}
	for i, r := range tsCalls(t, e, realShapeCalls) {
		if r.Thrown != "" || r.IsError || r.Structured || !strings.Contains(r.Text, wantText[i]) {
			t.Errorf("default, %s: %+v; want a success containing %s", realShapeCalls[i].Name, r, wantText[i])
		}
	}
	wantErr := []string{`missing properties: ["id","message"]`, `missing properties: ["message"]`, "not a JSON object"}
	for i, r := range tsCalls(t, e, realShapeCalls, "--output-schemas=strict") {
		if r.Thrown != "" || !r.IsError || !strings.Contains(r.Text, wantErr[i]) {
			t.Errorf("strict, %s: %+v; want isError naming %s", realShapeCalls[i].Name, r, wantErr[i])
		}
	}
}

// TestE2ERealShapesInspector is the same with MCP Inspector's CLI, one
// process per call: exit 0 for a success, 5 for an isError result.
func TestE2ERealShapesInspector(t *testing.T) {
	nm := nodeModules(t)
	inspector := filepath.Join(nm, ".bin", "mcp-inspector")
	e := realShapesEnv(t)
	for _, mode := range []struct {
		flag string
		code int
		want []string
	}{
		{"--output-schemas=warn", 0, []string{`\"updated\":true`, `\"deleted\":true`, `v-private`}},
		{"--output-schemas=strict", 5, []string{`missing properties: [\"id\",\"message\"]`, `missing properties: [\"message\"]`, "not a JSON object"}},
	} {
		for i, call := range realShapeCalls {
			args, _ := json.Marshal(call.Arguments)
			cmd := append([]string{"--cli", "--method", "tools/call", "--tool-name", call.Name, "--tool-args-json", string(args), "--", bridgeBin},
				e.args(mode.flag, "--log-level", "warn")...)
			stdout, stderr, code := runNode(t, 60*time.Second, inspector, cmd...)
			if code != mode.code || !strings.Contains(stdout+stderr, mode.want[i]) {
				t.Errorf("%s %s: exit %d, want %d and %s\nstdout:\n%.2000s\nstderr:\n%.2000s", mode.flag, call.Name, code, mode.code, mode.want[i], stdout, stderr)
			}
		}
	}
}

// TestE2EOutputSchemaMismatchWarnsOnce checks that the default mode tells
// the operator: one warning per tool whose results do not match its
// outputSchema, however many calls.
func TestE2EOutputSchemaMismatchWarnsOnce(t *testing.T) {
	e := realShapesEnv(t)
	cs, cmd := connectCmd(t, e, "2025-11-25", nil)
	for range 3 {
		for _, c := range realShapeCalls {
			if res := callTool(t, cs, c.Name, c.Arguments); res.IsError {
				t.Fatalf("%s: %s", c.Name, text(res))
			}
		}
	}
	if res := callTool(t, cs, "tairseach_server_status", nil); res.IsError {
		t.Fatal(text(res))
	}
	_ = cs.Close()
	stderr := cmd.Stderr.(*syncBuffer).String()
	var warnings []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "does not match the tool's outputSchema") {
			warnings = append(warnings, line)
		}
	}
	for _, c := range realShapeCalls {
		n := 0
		for _, w := range warnings {
			if strings.Contains(w, "tool="+c.Name+" ") || strings.HasSuffix(w, "tool="+c.Name) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d warnings, want 1\nstderr:\n%s", c.Name, n, stderr)
		}
	}
	if n := len(warnings); n != len(realShapeCalls) {
		t.Errorf("%d mismatch warnings, want %d (none for server.status)\nstderr:\n%s", n, len(realShapeCalls), stderr)
	}
}

// TestMaxResultBytesTooSmall checks that a limit leaving no room for a
// result besides the envelope is refused at the start, naming the least.
func TestMaxResultBytesTooSmall(t *testing.T) {
	cleanEnv(t)
	for _, v := range []string{"0", "-1", "4095"} {
		_, stderr, code := cli("", "--manifests", filepath.Join(repoRoot, "manifests.example"), "--max-result-bytes", v, "tools")
		if want := "--max-result-bytes " + v + ": must be at least 4096"; code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("--max-result-bytes %s: exit %d, stderr %q; want exit 2 and %q", v, code, stderr, want)
		}
	}
	if _, stderr, code := cli("", "--manifests", filepath.Join(repoRoot, "manifests.example"), "--max-result-bytes", "4096", "tools"); code != 0 {
		t.Errorf("--max-result-bytes 4096: exit %d, stderr %q", code, stderr)
	}
}
