package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
)

// faultTools is a manifest with the tools fault.ok, fault.slow and
// fault.silent on the fault backend at socket.
// startFaultEnv starts a fault backend answering after delay and writes
// the manifest of its tools; it returns the backend, its socket and the
// manifests directory.
func startFaultEnv(t *testing.T, delay time.Duration) (be *faultbackend.Server, socket, manifests string) {
	t.Helper()
	dir := shortDir(t)
	socket = filepath.Join(dir, "s.sock")
	be, err := faultbackend.Start(socket, faultbackend.Options{Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(be.Stop)
	manifests = filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(manifests, "fault.json"), []byte(faultTools(socket)), 0o644); err != nil {
		t.Fatal(err)
	}
	return be, socket, manifests
}

func faultTools(socket string) string {
	return fmt.Sprintf(`{"id":"fault","tools":[
 {"name":"fault.ok","inputSchema":{"type":"object"}},
 {"name":"fault.slow","inputSchema":{"type":"object"}},
 {"name":"fault.silent","inputSchema":{"type":"object"}}],
 "implementation":{"socket":%q,"methods":{"fault.ok":"fault.ok","fault.slow":"fault.slow","fault.silent":"fault.silent"}}}`, socket)
}

// rawSession is the real binary driven by raw JSON-RPC lines on its stdin.
type rawSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // stdout, line by line; closed at EOF
	stderr *syncBuffer
	exited chan error // receives cmd.Wait's result once
}

func startRaw(t *testing.T, args ...string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, cmd: exec.Command(bridgeBin, args...), lines: make(chan string, 100), stderr: &syncBuffer{}, exited: make(chan error, 1)}
	s.cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
		s.exited <- s.cmd.Wait() // after stdout's EOF, as Wait closes the pipe
	}()
	t.Cleanup(func() {
		s.stdin.Close()
		_ = s.cmd.Process.Kill()
		for range s.lines {
		}
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

func (s *rawSession) send(lines ...string) {
	s.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.stdin, l+"\n"); err != nil {
			s.t.Fatalf("writing %s: %v", l, err)
		}
	}
}

// next returns the next message on stdout, failing the test after limit.
func (s *rawSession) next(limit time.Duration) map[string]any {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("stdout closed; want another message")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			s.t.Fatalf("stdout line is not JSON: %q", l)
		}
		return m
	case <-time.After(limit):
		s.t.Fatalf("no message on stdout within %v", limit)
	}
	return nil
}

// TestStdioCancelBinary sends a tools/call to the real binary, cancels it
// with notifications/cancelled while the backend holds it, and checks that
// no response is ever written for it, that a ping and a call sent after it
// are answered at once (the 30 s call timeout is far away), that the call's
// socket connection was dropped (the next call dials a new one), and that
// the process exits promptly when stdin closes.
func TestStdioCancelBinary(t *testing.T) {
	for _, mode := range []faultbackend.Mode{faultbackend.ModeSlow, faultbackend.ModeSilent} {
		t.Run(string(mode), func(t *testing.T) {
			be, socket, manifests := startFaultEnv(t, 30*time.Second)
			s := startRaw(t, "--manifests", manifests, "--socket", socket, "--call-timeout", "30s", "--pool-size", "1", "--log-level", "debug")

			s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_fault_ok","arguments":{"n":1}}}`)
			for _, id := range []float64{0, 1} {
				if m := s.next(10 * time.Second); m["id"] != id || m["result"] == nil {
					t.Fatalf("want the result of request %v, got %v", id, m)
				}
			}

			s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tairseach_fault_` + string(mode) + `","arguments":{}}}`)
			deadline := time.Now().Add(10 * time.Second)
			for be.Requests() < 2 {
				if time.Now().After(deadline) {
					t.Fatal("the backend never received the call to cancel")
				}
				time.Sleep(time.Millisecond)
			}
			start := time.Now()
			s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`,
				`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"tairseach_fault_ok","arguments":{"n":4}}}`)
			got := map[float64]map[string]any{}
			for len(got) < 2 {
				m := s.next(5 * time.Second)
				id, _ := m["id"].(float64)
				if id == 2 {
					t.Fatalf("a response was written for the cancelled request: %v", m)
				}
				got[id] = m
			}
			took := time.Since(start)
			if got[3]["result"] == nil {
				t.Fatalf("ping after the cancellation: %v", got[3])
			}
			res, _ := got[4]["result"].(map[string]any)
			if res == nil || res["isError"] == true {
				t.Fatalf("call after the cancellation: %v", got[4])
			}
			if n := be.Accepted(); n != 2 {
				t.Fatalf("backend accepted %d connections, want 2: the cancelled call's connection must be dropped and redialled", n)
			}

			// End of input: nothing is pending, so the process exits at once,
			// still without a word about request 2.
			s.stdin.Close()
			exit := time.After(5 * time.Second)
		drain:
			for {
				select {
				case l, ok := <-s.lines:
					if !ok {
						break drain
					}
					t.Fatalf("unexpected output after the last response: %s", l)
				case <-exit:
					t.Fatal("bridge still running 5s after stdin closed")
				}
			}
			if err := <-s.exited; err != nil {
				t.Fatalf("bridge exited with %v", err)
			}
			if !strings.Contains(s.stderr.String(), "serving") {
				t.Fatalf("stderr lacks the startup line:\n%s", s.stderr.String())
			}
			t.Logf("ping and call answered %v after the cancellation", took)
		})
	}
}
