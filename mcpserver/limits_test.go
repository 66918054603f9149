package mcpserver

// Tests of the limits a bridge enforces, each at its boundary: the size of a
// result (--max-result-bytes, and the socket reply cap derived from it), the
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

// blobOverhead is what demo.blob wraps around its n bytes: {"data":"…"}.
const blobOverhead = len(`{"data":""}`)

func TestResultSizeLimitBoundary(t *testing.T) {
	const limit = 100_000
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, MaxResultBytes: limit, OutputSchemas: true, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	cs := session(t, srv, nil)
	// The socket reads replies of up to limit + 64 KiB, so that a result a
	// little over the limit is reported with its exact size.
	const socketCap = limit + 64<<10
	tests := []struct {
		name   string
		result int      // bytes of the result, as the backend sends it
		want   []string // in the isError text; none: the call succeeds
	}{
		{"well under", 1000, nil},
		{"at the limit", limit, nil},
		{"one byte over", limit + 1, []string{fmt.Sprintf("result too large: %d bytes, limit %d", limit+1, limit), "narrow the request"}},
		// The reply line adds {"jsonrpc":"2.0","id":N,"result":…} to the result.
		{"just under the socket cap", socketCap - 100, []string{fmt.Sprintf("result too large: %d bytes, limit %d", socketCap-100, limit)}},
		{"over the socket cap", socketCap + 1, []string{fmt.Sprintf("result too large: over %d bytes, limit %d", limit, limit), "narrow the request"}},
		{"far over the socket cap", 4 << 20, []string{fmt.Sprintf("result too large: over %d bytes, limit %d", limit, limit)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
				Name: "tairseach_demo_blob", Arguments: map[string]any{"bytes": tt.result - blobOverhead}})
			if err != nil {
				t.Fatal(err)
			}
			text := textOf(res)
			if len(tt.want) == 0 {
				if res.IsError || len(text) != tt.result {
					t.Fatalf("isError %v, %d bytes (%.200s); want a result of %d bytes", res.IsError, len(text), text, tt.result)
				}
			} else {
				if !res.IsError {
					t.Fatalf("result of %d bytes with a limit of %d was sent (%d bytes)", tt.result, limit, len(text))
				}
				for _, w := range tt.want {
					if !strings.Contains(text, w) {
						t.Errorf("isError text %q does not contain %q", text, w)
					}
				}
			}
			// The connection is usable (or was replaced) afterwards.
			res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_server_status", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("call after a result of %d bytes: %v %s", tt.result, err, textOf(res))
			}
		})
	}
}

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
