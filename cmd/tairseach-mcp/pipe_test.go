package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// shellPipe runs `echo LINE | tairseach-mcp ARGS` in a real shell and
// returns stdout's lines, stderr and the exit code.
func shellPipe(t *testing.T, e env, input string, extra ...string) (lines []string, stderr string, code int) {
	t.Helper()
	script := "printf '%s\\n' \"$INPUT\" | \"$BIN\" \"$@\""
	cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, e.args(extra...)...)...)
	cmd.Env = append(cmd.Environ(), "INPUT="+input, "BIN="+bridgeBin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the pipe did not exit within 20s; stderr:\n%s", errb.String())
	}
	if s := strings.TrimRight(out.String(), "\n"); s != "" {
		lines = strings.Split(s, "\n")
	}
	return lines, errb.String(), cmd.ProcessState.ExitCode()
}

func TestShellPipes(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, m map[string]any)
	}{
		{
			name:  "initialize",
			input: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
			check: func(t *testing.T, m map[string]any) {
				res, _ := m["result"].(map[string]any)
				info, _ := res["serverInfo"].(map[string]any)
				if m["id"] != float64(1) || info["name"] != "tairseach-mcp" || res["protocolVersion"] != "2025-06-18" {
					t.Fatalf("initialize response: %v", m)
				}
			},
		},
		{
			name:  "tools/list",
			input: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
			check: func(t *testing.T, m map[string]any) {
				res, _ := m["result"].(map[string]any)
				tools, _ := res["tools"].([]any)
				if m["id"] != float64(2) || len(tools) == 0 {
					t.Fatalf("tools/list response: %v", m)
				}
			},
		},
		{
			name:  "tools/call",
			input: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tairseach_server_status","arguments":{}}}`,
			check: func(t *testing.T, m map[string]any) {
				res, _ := m["result"].(map[string]any)
				content, _ := res["content"].([]any)
				if m["id"] != float64(3) || res["isError"] == true || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), `"status":"ok"`) {
					t.Fatalf("tools/call response: %v", m)
				}
			},
		},
		{
			name:  "garbage",
			input: `this is not json`,
			check: func(t *testing.T, m map[string]any) {
				if errCode(m) != -32700 || m["id"] != nil {
					t.Fatalf("garbage line: %v", m)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, stderr, code := shellPipe(t, e, tt.input)
			if code != 0 {
				t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
			}
			if len(lines) != 1 {
				t.Fatalf("stdout has %d lines, want exactly 1:\n%s\nstderr:\n%s", len(lines), strings.Join(lines, "\n"), stderr)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
				t.Fatalf("stdout is not one JSON-RPC message: %q", lines[0])
			}
			tt.check(t, m)
		})
	}
}

func TestShellPipeManyCallsAllAnswered(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	var in []string
	in = append(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const n = 20
	for i := 1; i <= n; i++ {
		in = append(in, `{"jsonrpc":"2.0","id":`+itoa(i)+`,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":200}}}`)
	}
	lines, stderr, code := shellPipe(t, e, strings.Join(in, "\n"))
	if code != 0 || len(lines) != n+1 {
		t.Fatalf("exit %d, %d lines (want %d); stderr:\n%s", code, len(lines), n+1, stderr)
	}
	seen := map[float64]bool{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
			t.Fatalf("response %v", m)
		}
		seen[m["id"].(float64)] = true
	}
	if len(seen) != n+1 {
		t.Fatalf("ids answered: %v", seen)
	}
}

func TestShellPipeLogsGoToStderrOnly(t *testing.T) {
	e := newEnv(t)
	lines, stderr, code := shellPipe(t, e, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "--log-level", "trace")
	if code != 0 || len(lines) != 1 || lines[0] != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("exit %d, stdout %q", code, lines)
	}
	if !strings.Contains(stderr, "serving") {
		t.Fatalf("stderr lacks the startup log line:\n%s", stderr)
	}
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestQuietStdioStart serves over stdio as a client starts the server, with
// no --log-level: initialize and tools/list answered, stdin closed, and not
// one byte on stderr (Claude Code files every stderr line under errors).
// --log-level info brings the start-up lines back.
func TestQuietStdioStart(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	}, "\n")
	for _, tt := range []struct {
		name  string
		extra []string
		quiet bool
	}{
		{name: "default", quiet: true},
		{name: "info", extra: []string{"--log-level", "info"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := "printf '%s\\n' \"$INPUT\" | \"$BIN\" \"$@\""
			args := append([]string{"-c", script, "sh", "--manifests", e.manifests, "--socket", e.socket}, tt.extra...)
			cmd := exec.Command("sh", args...)
			cmd.Env = append(cmd.Environ(), "INPUT="+in, "BIN="+bridgeBin, "TAIRSEACH_MCP_LOG_LEVEL=", "TAIRSEACH_MCP_TRANSPORT=")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v; stderr:\n%s", err, errb.String())
			}
			if n := strings.Count(out.String(), "\n"); n != 2 || !strings.Contains(out.String(), `"tairseach_contacts_search"`) {
				t.Fatalf("stdout (%d lines):\n%s", n, out.String())
			}
			if tt.quiet && errb.Len() != 0 {
				t.Fatalf("stderr is not empty:\n%s", errb.String())
			}
			if !tt.quiet && !strings.Contains(errb.String(), "INF") {
				t.Fatalf("--log-level info: no start-up lines on stderr:\n%s", errb.String())
			}
		})
	}
}
