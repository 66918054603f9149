package main

// Third-party MCP clients, installed from scripts/package-lock.json by
// `make test` (npm ci): the TypeScript SDK and MCP Inspector's CLI.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// missingClients stops a test that needs the npm clients when they are not
// installed: skipped on a plain `go test`, so a fresh clone passes, and
// failed under CI=true, where `make test` must have installed them.
func missingClients(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: the npm clients are required)", msg)
	}
	t.Skipf("%s; `make test` installs them (set CI=true to fail instead of skipping)", msg)
}

// skipShort skips t under go test -short, saying what makes it slow: it
// drives a real npm client or agent, builds release files, or runs a long
// process. make test, which installs the clients, runs it.
func skipShort(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s; make test runs it", what)
	}
}

// nodeModules returns scripts/node_modules, or stops the test with the fix
// when the pinned clients are not installed.
func nodeModules(t *testing.T) string {
	t.Helper()
	skipShort(t, "drives the pinned npm clients")
	dir := filepath.Join(repoRoot, "scripts", "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "sdk")); err != nil {
		missingClients(t, "the pinned MCP clients are not installed: run `make test`, or `cd scripts && npm ci` (%v)", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missingClients(t, "node is not installed: %v", err)
	}
	return dir
}

// runNode runs a command with a time limit and returns stdout and stderr.
func runNode(t *testing.T, limit time.Duration, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = filepath.Join(repoRoot, "scripts")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish within %v\nstdout:\n%s\nstderr:\n%s", name, limit, out.String(), errb.String())
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func TestTypeScriptSDKClient(t *testing.T) {
	nodeModules(t)
	e := newEnv(t)
	startBackend(t, e.socket)
	args := append([]string{"ts-client.mjs", "basic", bridgeBin}, e.args()...)
	stdout, stderr, code := runNode(t, 60*time.Second, "node", args...)
	if code != 0 {
		t.Fatalf("ts-client exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var out struct {
		ServerInfo   struct{ Name string }
		Capabilities struct {
			Tools struct{ ListChanged bool }
		}
		Tools  []string
		Status struct {
			IsError           bool
			StructuredContent map[string]any
			Content           []struct{ Text string }
		}
		Search struct {
			IsError           bool
			StructuredContent struct{ Count int }
		}
		Fail struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal([]byte(lastLine(stdout)), &out); err != nil {
		t.Fatalf("ts-client output %q: %v", stdout, err)
	}
	if out.ServerInfo.Name != "tairseach-mcp" || !out.Capabilities.Tools.ListChanged || len(out.Tools) == 0 {
		t.Errorf("initialize/list as seen by the TypeScript SDK: %+v", out)
	}
	// The default, --output-schemas=warn, sends results as text only.
	if out.Status.IsError || out.Status.StructuredContent != nil || len(out.Status.Content) != 1 || !strings.Contains(out.Status.Content[0].Text, `"status":"ok"`) {
		t.Errorf("server.status as seen by the TypeScript SDK: %+v", out.Status)
	}
	if out.Search.IsError {
		t.Errorf("contacts.search as seen by the TypeScript SDK: %+v", out.Search)
	}
	if !out.Fail.IsError || len(out.Fail.Content) == 0 || !strings.Contains(out.Fail.Content[0].Text, "-32001") {
		t.Errorf("demo.fail as seen by the TypeScript SDK: %+v", out.Fail)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func TestMCPInspectorCLI(t *testing.T) {
	nm := nodeModules(t)
	inspector := filepath.Join(nm, ".bin", "mcp-inspector")
	e := newEnv(t)
	startBackend(t, e.socket)
	server := append([]string{"--", bridgeBin}, e.args()...)
	inspect := func(args ...string) (string, string, int) {
		t.Helper()
		return runNode(t, 60*time.Second, inspector, append(append([]string{"--cli"}, args...), server...)...)
	}

	stdout, stderr, code := inspect("--method", "tools/list")
	if code != 0 || !strings.Contains(stdout, "tairseach_contacts_search") {
		t.Fatalf("inspector tools/list: exit %d\nstdout:\n%.2000s\nstderr:\n%s", code, stdout, stderr)
	}

	stdout, stderr, code = inspect("--method", "tools/call", "--tool-name", "tairseach_contacts_search", "--tool-arg", "query=a", "--tool-arg", "limit=2")
	if code != 0 || !strings.Contains(stdout, `\"query\":\"a\"`) {
		t.Fatalf("inspector tools/call contacts.search: exit %d\nstdout:\n%.2000s\nstderr:\n%s", code, stdout, stderr)
	}

	stdout, stderr, code = inspect("--method", "tools/call", "--tool-name", "tairseach_demo_fail")
	if code != 5 || !strings.Contains(stdout+stderr, "-32001") {
		t.Fatalf("inspector tools/call of a failing tool: exit %d (want 5)\nstdout:\n%.2000s\nstderr:\n%s", code, stdout, stderr)
	}
}

// startNode starts node in scripts/ and returns its stdout lines.
func startNode(t *testing.T, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir = filepath.Join(repoRoot, "scripts")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

func readLine(t *testing.T, lines <-chan string, limit time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("the client's stdout closed early")
		}
		return l
	case <-time.After(limit):
		t.Fatalf("no line from the client within %v", limit)
	}
	return ""
}

// TestMCPRemoteWithoutTokenFailsFast runs mcp-remote (the stdio-to-HTTP
// proxy many clients use for URLs) against the HTTP server without the
// token, and with a wrong one: finding no OAuth server it registers itself
// at /register, and the refusal must end it at once, saying where the
// token is, rather than leave it waiting for a browser sign-in. With the
// token it serves.
func TestMCPRemoteWithoutTokenFailsFast(t *testing.T) {
	dir := nodeModules(t)
	remote := filepath.Join(dir, ".bin", "mcp-remote")
	if _, err := os.Stat(remote); err != nil {
		missingClients(t, "mcp-remote is not installed: run `cd scripts && npm ci` (%v)", err)
	}
	e := newEnv(t)
	startBackend(t, e.socket)
	b := startHTTPDefault(t, e)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	for _, tt := range []struct {
		name   string
		header string
		ok     bool
	}{
		{name: "no token"},
		{name: "wrong token", header: "Authorization: Bearer " + strings.Repeat("0", 64)},
		{name: "token", header: "Authorization: Bearer " + b.token, ok: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{b.url, "--transport", "http-only"}
			if tt.header != "" {
				args = append(args, "--header", tt.header)
			}
			cmd := exec.Command(remote, args...)
			// Its OAuth state goes to ~/.mcp-auth: a fresh HOME each run.
			cmd.Env = append(os.Environ(), "HOME="+shortDir(t))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, errb syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			defer func() {
				_ = stdin.Close()
				_ = cmd.Process.Kill()
				<-done
			}()
			if _, err := io.WriteString(stdin, initialize); err != nil && tt.ok {
				t.Fatal(err)
			}
			deadline := time.After(20 * time.Second)
			if tt.ok {
				for !strings.Contains(out.String(), `"serverInfo"`) {
					select {
					case <-done:
						t.Fatalf("mcp-remote exited; stderr:\n%s", errb.String())
					case <-deadline:
						t.Fatalf("no initialize result in 20s; stderr:\n%s", errb.String())
					case <-time.After(50 * time.Millisecond):
					}
				}
				return
			}
			select {
			case <-done:
			case <-deadline:
				t.Fatalf("mcp-remote still waits after 20s; stderr:\n%s", errb.String())
			}
			if code := cmd.ProcessState.ExitCode(); code == 0 {
				t.Errorf("exit status 0, want a failure")
			}
			if !strings.Contains(errb.String(), "not an OAuth sign-in") || !strings.Contains(errb.String(), "~/.tairseach/mcp-token") {
				t.Errorf("stderr does not say where the token is:\n%s", errb.String())
			}
		})
	}
}
