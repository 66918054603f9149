package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestShutdownSequence stops the real binary as the MCP spec tells a
// client to: close stdin, wait 2 s, SIGTERM, wait 3 s, SIGKILL. With a
// 2026-07-28 listen stream open, a call waiting for the user's
// confirmation, a call the backend never answers, or a client that stopped
// reading stdout, the process exits before the SIGKILL, every request it
// read (but for the client that does not read) gets exactly one answer,
// and every call has its audit line.
func TestShutdownSequence(t *testing.T) {
	const (
		init2025  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"0"}}}`
		initDone  = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		meta2026  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		listen    = `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta2026 + `}}`
		slowCall  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_fault_slow","arguments":{}}}`
		confirmed = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_fault_ok","arguments":{}}}`
	)
	for _, tt := range []struct {
		name     string
		args     []string
		lines    []string
		noRead   bool    // the client stops reading stdout
		answered []any   // ids that must be answered before exit
		calls    int     // audit lines
		exitBy   float64 // seconds after stdin closes
	}{
		{name: "listen stream", lines: []string{listen}, answered: []any{1.0}, exitBy: 1.5},
		{name: "pending elicitation", args: []string{"--confirm", "fault.ok"}, lines: []string{init2025, initDone, confirmed},
			answered: []any{0.0, 1.0}, calls: 1, exitBy: 1.5},
		{name: "hanging call", lines: []string{init2025, initDone, slowCall}, answered: []any{0.0, 1.0}, calls: 1, exitBy: 4.5},
		{name: "blocked stdout", noRead: true, lines: blobCalls(40), calls: 40, exitBy: 5},
		// Before the SIGTERM: the drain timeout ends it, not a signal.
		{name: "blocked stdout, drain timeout", noRead: true, args: []string{"--drain-timeout", "500ms"}, lines: blobCalls(40), calls: 40, exitBy: 1.9},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			_, socket, manifests := startFaultEnv(t, 60*time.Second)
			audit := filepath.Join(shortDir(t), "audit.jsonl")
			args := append([]string{"--manifests", manifests, "--socket", socket, "--audit-log", audit}, tt.args...)
			if tt.noRead {
				args = append([]string{"--manifests", filepath.Join(repoRoot, "manifests.example"), "--socket", startBackend(t, filepath.Join(shortDir(t), "d.sock")).path, "--audit-log", audit}, tt.args...)
			}
			s := startRaw(t, args...)
			s.send(tt.lines...)
			got := map[any]int{}
			collect := func(limit time.Duration) {
				for {
					select {
					case l, ok := <-s.lines:
						if !ok {
							return
						}
						var m map[string]any
						if json.Unmarshal([]byte(l), &m) != nil {
							t.Fatalf("not JSON: %q", l)
						}
						if id, ok := m["id"]; ok && m["method"] == nil {
							got[id]++
						}
					case <-time.After(limit):
						return
					}
				}
			}
			if tt.noRead {
				// The bridge starts, reads the calls and blocks on stdout;
				// on a loaded machine that takes more than half a second.
				time.Sleep(1500 * time.Millisecond)
			} else {
				collect(300 * time.Millisecond)
			}
			start := time.Now()
			s.stdin.Close()
			exited := make(chan struct{})
			go func() {
				if !tt.noRead {
					collect(10 * time.Second)
				}
				<-s.exited
				close(exited)
			}()
			select {
			case <-exited:
			case <-time.After(2 * time.Second):
				_ = s.cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-exited:
				case <-time.After(3 * time.Second):
					_ = s.cmd.Process.Kill()
					<-exited
					t.Fatalf("still running 3 s after SIGTERM: killed")
				}
			}
			took := time.Since(start)
			if took.Seconds() > tt.exitBy {
				t.Errorf("exited %v after stdin closed; want within %vs", took.Round(time.Millisecond), tt.exitBy)
			}
			for _, id := range tt.answered {
				if got[id] != 1 {
					t.Errorf("request %v answered %d times, want once (answers: %v)", id, got[id], got)
				}
			}
			b, _ := os.ReadFile(audit)
			lines := strings.Count(string(b), "\n")
			if lines != tt.calls {
				t.Errorf("%d audit lines, want %d:\n%s", lines, tt.calls, b)
			}
			if len(b) > 0 && !strings.HasSuffix(string(b), "\n") {
				t.Errorf("audit log ends in a partial record: %q", b[max(0, len(b)-80):])
			}
		})
	}
}

// blobCalls initialises a session and makes n calls: one whose answer is a
// line longer than the test's reader takes (1 MiB), which so stops reading
// stdout for good, one whose answer then waits behind it, and calls still
// running when the session is cut off. These sleep in the backend rather
// than move megabytes: 40 answers of 1 MB kept a 2-core machine so busy
// that the timings measured it, not the bridge.
func blobCalls(n int) []string {
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	for i := 1; i <= n; i++ {
		call := `"name":"tairseach_demo_slow","arguments":{"ms":60000}`
		switch i {
		case 1:
			call = `"name":"tairseach_demo_blob","arguments":{"bytes":1200000}`
		case 2:
			call = `"name":"tairseach_demo_blob","arguments":{"bytes":100000}`
		}
		lines = append(lines, `{"jsonrpc":"2.0","id":`+itoa(i)+`,"method":"tools/call","params":{`+call+`}}`)
	}
	return lines
}

// A second stop signal ends the process at once, without waiting out the
// grace, and the call in flight still has its audit line.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	_, socket, manifests := startFaultEnv(t, 60*time.Second)
	audit := filepath.Join(shortDir(t), "audit.jsonl")
	s := startRaw(t, "--manifests", manifests, "--socket", socket, "--audit-log", audit, "--shutdown-grace", "30s")
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_fault_slow","arguments":{}}}`)
	if m := s.next(10 * time.Second); m["id"] != 0.0 {
		t.Fatalf("initialize: %v", m)
	}
	time.Sleep(200 * time.Millisecond) // the call reaches the backend
	go func() {
		for range s.lines {
		}
	}()
	signalTwice(t, s.cmd.Process, s.exited, audit, "tairseach_fault_slow")
}

// signalTwice sends SIGTERM, and again 200 ms later, and checks that the
// process exits at once after the second (its grace being 30 s) and that
// the call of tool in flight still has its line in the audit log.
func signalTwice[T any](t *testing.T, p *os.Process, exited <-chan T, audit, tool string) {
	t.Helper()
	_ = p.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after the second signal (the grace is 30 s)")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("exited %v after the second signal", d.Round(time.Millisecond))
	}
	b, _ := os.ReadFile(audit)
	if !strings.Contains(string(b), `"tool":"`+tool+`"`) {
		t.Errorf("no audit line for the call in flight:\n%s", b)
	}
}
