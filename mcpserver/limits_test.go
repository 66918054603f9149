package mcpserver

// Tests of the limits a bridge enforces, each at its boundary: the size of a
// result message (--max-result-bytes: TestMessageSizeLimitBoundary), the
// number of calls in flight (--max-in-flight) and the time limit of a call
// (--call-timeout, overridden by a tool's timeoutMs).

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// slowTools maps three tools to demo.slow: one with timeoutMs 200, one with
// 5000, one without.
const slowTools = `{"id":"t","tools":[
	{"name":"short","inputSchema":{"type":"object"},"timeoutMs":200},
	{"name":"long","inputSchema":{"type":"object"},"timeoutMs":5000},
	{"name":"plain","inputSchema":{"type":"object"}}],
	"implementation":{"methods":{"short":"demo.slow","long":"demo.slow","plain":"demo.slow"}}}`

// TestDefaultCallTimeout checks that a call left to the default limit may
// take as long as the real server lets a script run (60 s), with a margin
// for the round trip, and that Config{} gets that default.
func TestDefaultCallTimeout(t *testing.T) {
	const scriptLimit = 60 * time.Second
	if DefaultCallTimeout < scriptLimit+15*time.Second {
		t.Errorf("DefaultCallTimeout = %v, want at least the script runner's %v plus a margin", DefaultCallTimeout, scriptLimit)
	}
	srv := New(Config{Logger: zerolog.Nop()}, registryOf(t, slowTools))
	defer srv.Close()
	if got := srv.cfg.CallTimeout; got != DefaultCallTimeout {
		t.Errorf("Config{} call timeout = %v, want %v", got, DefaultCallTimeout)
	}
}

func TestToolTimeoutOverridesCallTimeout(t *testing.T) {
	sock := startDemo(t)
	tests := []struct {
		name        string
		callTimeout time.Duration // 0: the default, 90 s
		tool        string
		sleepMs     int
		// A timeout is expected within [min, max] naming limit; limit ""
		// expects success after at least min.
		limit    string
		min, max time.Duration
	}{
		{"timeoutMs 200 under the default 90s", 0, "short", 3000, "200ms", 180 * time.Millisecond, 2 * time.Second},
		{"timeoutMs 5000 outlives --call-timeout 300ms", 300 * time.Millisecond, "long", 1000, "", time.Second, 4 * time.Second},
		{"no timeoutMs: --call-timeout 300ms", 300 * time.Millisecond, "plain", 3000, "300ms", 280 * time.Millisecond, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(Config{DefaultSocket: sock, CallTimeout: tt.callTimeout, Logger: zerolog.Nop()}, registryOf(t, slowTools))
			defer srv.Close()
			cs := session(t, srv, nil)
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
				Name: "tairseach_" + tt.tool, Arguments: map[string]any{"ms": tt.sleepMs}})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			text := textOf(res)
			t.Logf("took %v: isError %v: %s", took, res.IsError, text)
			if tt.limit == "" {
				if res.IsError || text != fmt.Sprintf(`{"sleptMs":%d}`, tt.sleepMs) {
					t.Fatalf("isError %v, %q; want the result", res.IsError, text)
				}
			} else {
				want := fmt.Sprintf("within %s (method demo.slow)", tt.limit)
				if !res.IsError || !strings.Contains(text, want) {
					t.Fatalf("isError %v, %q; want a timeout naming %q", res.IsError, text, want)
				}
			}
			if took < tt.min || took > tt.max {
				t.Fatalf("took %v, want between %v and %v", took, tt.min, tt.max)
			}
		})
	}
}

// TestMaxInFlightQueues complements TestBusyBeyondMaxInFlight: calls over the
// limit wait for a slot rather than fail while their time limit allows, and
// no more than the limit ever run at once.
func TestMaxInFlightQueues(t *testing.T) {
	const inFlight, calls, sleep = 2, 6, 300
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, MaxInFlight: inFlight, PoolSize: calls, CallTimeout: 10 * time.Second, Logger: zerolog.Nop()},
		registryOf(t, slowTools))
	defer srv.Close()
	start := time.Now()
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			res := srv.Call(context.Background(), "tairseach_plain", json.RawMessage(fmt.Sprintf(`{"ms":%d}`, sleep)))
			if res.IsError {
				t.Errorf("queued call: %s", textOf(res))
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	// Six calls of 300 ms, two at a time, take three rounds.
	if min := calls / inFlight * sleep * time.Millisecond; took < min || took > 3*min {
		t.Fatalf("%d calls of %d ms with %d in flight took %v, want about %v", calls, sleep, inFlight, took, min)
	}
	t.Logf("%d calls of %d ms with --max-in-flight %d took %v", calls, sleep, inFlight, took)
}
