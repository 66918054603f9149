package main

import (
	"encoding/json"
	"fmt"
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
//
// What ends each is read from its log, not from the clock, so that a busy
// machine does not fail it: a session that must end by itself gets no
// signal (and 10 s), and its log says what cut its calls off (nothing, or
// the drain timeout); a session that needs the SIGTERM logs that the
// shutdown grace cut them off, and must exit before the SIGKILL.
func TestShutdownSequence(t *testing.T) {
	const (
		init2025  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"0"}}}`
		initDone  = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		meta2026  = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		listen    = `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta2026 + `}}`
		slowCall  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_fault_slow","arguments":{}}}`
		confirmed = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_fault_ok","arguments":{}}}`
		// The line the bridge logs when a timer cuts calls off; cutOff
		// says which.
		cutOffLine = "requests still running at the "
	)
	for _, tt := range []struct {
		name     string
		args     []string
		lines    []string
		noRead   bool   // the client stops reading stdout
		ready    string // before closing stdin, wait for an answer to id 0 ("answer") or an elicitation ("elicitation")
		answered []any  // ids that must be answered before exit
		calls    int    // audit lines
		signal   bool   // it takes the SIGTERM to end it
		cutOff   string // what cut calls off, as its log says: "" for nothing
	}{
		{name: "listen stream", lines: []string{listen}, answered: []any{1.0}},
		{name: "pending elicitation", args: []string{"--confirm", "fault.ok"}, lines: []string{init2025, initDone, confirmed},
			ready: "elicitation", answered: []any{0.0, 1.0}, calls: 1},
		{name: "hanging call", lines: []string{init2025, initDone, slowCall}, ready: "answer", answered: []any{0.0, 1.0}, calls: 1,
			signal: true, cutOff: "shutdown grace; answering them with an error limit=2000 "},
		{name: "blocked stdout", noRead: true, lines: blobCalls(40), calls: 40,
			signal: true, cutOff: "shutdown grace; answering them with an error limit=2000 "},
		// Without a signal: the drain timeout ends it.
		{name: "blocked stdout, drain timeout", noRead: true, args: []string{"--drain-timeout", "500ms"}, lines: blobCalls(40), calls: 40,
			cutOff: "drain timeout; answering them with an error limit=500 "},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			_, socket, manifests := startFaultEnv(t, 60*time.Second)
			audit := filepath.Join(shortDir(t), "audit.jsonl")
			args := append([]string{"--manifests", manifests, "--socket", socket, "--audit-log", audit}, tt.args...)
			if tt.noRead {
				// --result-budget off: the first answer comes whole, over
				// the reader's 1 MiB, not as its first part.
				args = append([]string{"--manifests", filepath.Join(repoRoot, "manifests.example"), "--socket", startBackend(t, filepath.Join(shortDir(t), "d.sock")).path,
					"--audit-log", audit, "--result-budget", "off"}, tt.args...)
			}
			s := startRaw(t, args...)
			s.send(tt.lines...)
			got := map[any]int{}
			// collect reads messages until stdout ends, until done says
			// so of one, or for limit; it says whether done did.
			collect := func(limit time.Duration, done func(map[string]any) bool) bool {
				timeout := time.After(limit)
				for {
					select {
					case l, ok := <-s.lines:
						if !ok {
							return false
						}
						var m map[string]any
						if json.Unmarshal([]byte(l), &m) != nil {
							t.Errorf("not JSON: %q", l)
							return false
						}
						if id, ok := m["id"]; ok && m["method"] == nil {
							got[id]++
						}
						if done != nil && done(m) {
							return true
						}
					case <-timeout:
						return false
					}
				}
			}
			switch {
			case tt.noRead:
				// The client's reader gives up on the first answer, a
				// line over its 1 MiB: from then on nobody reads stdout,
				// and the bridge blocks writing to it.
				var read syncBuffer
				select {
				case <-s.exited:
					t.Fatal("the bridge exited before its stdin closed")
				case <-drained(s.lines, &read):
				case <-time.After(30 * time.Second):
					t.Fatalf("the client's reader did not stop within 30 s: no answer over 1 MiB came; it read %.300q", read.String())
				}
			case tt.ready == "answer":
				if !collect(30*time.Second, func(m map[string]any) bool { return m["id"] == 0.0 && m["method"] == nil }) {
					t.Fatal("no answer to initialize within 30 s")
				}
			case tt.ready == "elicitation":
				if !collect(30*time.Second, func(m map[string]any) bool { return m["method"] == "elicitation/create" }) {
					t.Fatal("no elicitation within 30 s")
				}
			default:
				collect(300*time.Millisecond, nil)
			}
			start := time.Now()
			s.stdin.Close()
			exited := make(chan struct{})
			go func() {
				if !tt.noRead {
					collect(time.Minute, nil)
				}
				<-s.exited
				close(exited)
			}()
			wait := 10 * time.Second // ends by itself: no signal, time for a busy machine
			if tt.signal {
				wait = 2 * time.Second // the spec's wait before the SIGTERM
			}
			select {
			case <-exited:
			case <-time.After(wait):
				if !tt.signal {
					_ = s.cmd.Process.Kill()
					<-exited
					t.Fatalf("still running %v after stdin closed, with no signal: killed", wait)
				}
				_ = s.cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-exited:
				case <-time.After(3 * time.Second):
					_ = s.cmd.Process.Kill()
					<-exited
					t.Fatalf("still running 3 s after SIGTERM: killed")
				}
			}
			t.Logf("exited %v after stdin closed", time.Since(start).Round(time.Millisecond))
			log := s.stderr.String()
			if i := strings.Index(log, cutOffLine); tt.cutOff == "" && i >= 0 {
				t.Errorf("calls were cut off; want none left at the end:\n%s", log)
			} else if tt.cutOff != "" && (i < 0 || !strings.HasPrefix(log[i+len(cutOffLine):], tt.cutOff)) {
				t.Errorf("the log does not say the %s cut the calls off:\n%s", strings.SplitN(tt.cutOff, ";", 2)[0], log)
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

// drained reads lines until it is closed, and then closes the channel it
// returns; it writes each line to read, to say what came.
func drained(lines <-chan string, read *syncBuffer) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for l := range lines {
			fmt.Fprintln(read, l)
		}
		close(done)
	}()
	return done
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
