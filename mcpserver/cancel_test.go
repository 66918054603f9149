package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
	"github.com/geilt/tairseach-mcp/mcpserver"
)

// TestCancelAbortsSocketCall cancels a call through a real MCP session (the
// go-sdk client sends notifications/cancelled when the caller's context is
// cancelled) while the backend holds it, and checks that the bridge drops
// the socket connection at once rather than at the 30 s call timeout. With
// a pool of one connection, the next call can only run if the cancelled
// one gave its connection up, and it must dial a new one.
func TestCancelAbortsSocketCall(t *testing.T) {
	for _, mode := range []faultbackend.Mode{faultbackend.ModeSlow, faultbackend.ModeSilent} {
		t.Run(string(mode), func(t *testing.T) {
			e := newFaultEnv(t, mcpserver.Config{CallTimeout: 30 * time.Second, PoolSize: 1},
				faultbackend.Options{Delay: 30 * time.Second})
			e.mustOK(1)
			if n := e.be.Accepted(); n != 1 {
				t.Fatalf("backend accepted %d connections, want 1", n)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				// Cancel once the backend holds the call.
				for e.be.Requests() < 2 && ctx.Err() == nil {
					time.Sleep(time.Millisecond)
				}
				cancel()
			}()
			start := time.Now()
			res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_fault_" + string(mode), Arguments: json.RawMessage(`{}`)})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call = %v, %v; want context.Canceled", res, err)
			}

			e.mustOK(2)
			took := time.Since(start)
			if took > 5*time.Second {
				t.Fatalf("the call after a cancellation finished %v after it; the socket call was not aborted", took)
			}
			if n := e.be.Accepted(); n != 2 {
				t.Fatalf("backend accepted %d connections, want 2: the cancelled call's connection must be dropped and redialled", n)
			}
			if n := e.be.Requests(); n != 3 {
				t.Fatalf("backend read %d requests, want 3", n)
			}
			e.mustOK(3)
			t.Logf("cancelled fault.%s and called again in %v", mode, took)
		})
	}
}
