package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStdioSignals stops the real binary in stdio mode with SIGTERM or
// SIGINT while its stdin stays open, as Claude Desktop does: before the
// first line, while idle, during a call that finishes within the drain
// timeout and during one that does not. Each time the process exits 0
// within a bound, having written exactly one response per request read.
func TestStdioSignals(t *testing.T) {
	const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	const slowCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_fault_slow","arguments":{}}}`
	for _, tt := range []struct {
		name  string
		sig   syscall.Signal
		delay time.Duration // of the backend's answer
		drain string
		lines []string         // sent before the signal
		want  []map[string]any // id → "result" or "error", in order
	}{
		{name: "before the first line", sig: syscall.SIGTERM},
		{name: "idle", sig: syscall.SIGINT, lines: []string{initialize},
			want: []map[string]any{{"id": 0.0, "result": true}}},
		{name: "during a call", sig: syscall.SIGTERM, delay: 800 * time.Millisecond, drain: "20s",
			lines: []string{initialize, slowCall},
			want:  []map[string]any{{"id": 0.0, "result": true}, {"id": 1.0, "result": true}}},
		{name: "during a call past the shutdown grace", sig: syscall.SIGINT, delay: 30 * time.Second, drain: "300ms",
			lines: []string{initialize, slowCall},
			want:  []map[string]any{{"id": 0.0, "result": true}, {"id": 1.0, "error": true}}},
	} {
		t.Run(strings.ReplaceAll(tt.name, " ", "_"), func(t *testing.T) {
			be, socket, manifests := startFaultEnv(t, max(tt.delay, time.Millisecond))
			args := []string{"--manifests", manifests, "--socket", socket, "--log-level", "debug"}
			if tt.drain != "" {
				args = append(args, "--shutdown-grace", tt.drain)
			}
			s := startRaw(t, args...)
			// The handlers are installed before the server logs that it serves.
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(s.stderr.String(), "serving") {
				if time.Now().After(deadline) {
					t.Fatal("no startup line on stderr within 20s")
				}
				time.Sleep(5 * time.Millisecond)
			}
			s.send(tt.lines...)
			var got []map[string]any
			if len(tt.want) > 0 {
				got = append(got, s.next(20*time.Second)) // initialize
			}
			if len(tt.want) > 1 {
				// The call is in flight once the backend has it.
				for be.Requests() < 1 {
					if time.Now().After(deadline) {
						t.Fatal("the backend never received the call")
					}
					time.Sleep(time.Millisecond)
				}
			}
			start := time.Now()
			if err := s.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			bound := 10 * time.Second
			timeout := time.After(bound)
		read:
			for {
				select {
				case l, ok := <-s.lines:
					if !ok {
						break read
					}
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatalf("stdout line is not JSON: %q", l)
					}
					got = append(got, m)
				case <-timeout:
					t.Fatalf("still running %v after %v while stdin stays open", bound, tt.sig)
				}
			}
			if err := <-s.exited; err != nil {
				t.Fatalf("exit after %v: %v, want 0", tt.sig, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d responses, want %d: %v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				if got[i]["id"] != w["id"] || (got[i]["result"] != nil) != (w["result"] != nil) || (got[i]["error"] != nil) != (w["error"] != nil) {
					t.Errorf("response %d = %v, want id %v with %v", i, got[i], w["id"], w)
				}
			}
			t.Logf("exited %v after %v", time.Since(start), tt.sig)
		})
	}
}
