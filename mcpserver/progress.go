package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultProgressInterval is how often a call whose request carries a
// progressToken is reported on while the backend works on it.
const DefaultProgressInterval = 5 * time.Second

// progress sends notifications/progress for one call while it waits for
// the backend.
type progress struct {
	session  *mcp.ServerSession
	token    any
	interval time.Duration
}

type progressKey struct{}

func progressFrom(ctx context.Context) *progress {
	p, _ := ctx.Value(progressKey{}).(*progress)
	return p
}

// withProgress returns ctx carrying a progress reporter when the request
// asked for progress (params._meta.progressToken) and reporting is on.
func (s *Server) withProgress(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if s.cfg.ProgressInterval <= 0 || req.Session == nil {
		return ctx
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, &progress{session: req.Session, token: tok, interval: s.cfg.ProgressInterval})
}

// run reports every interval until the returned stop is called; stop
// returns once no notification can be sent any more, so that none follows
// the response. progress counts the intervals waited: it only grows.
func (p *progress) run(ctx context.Context, method string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			waited := time.Since(start).Round(100 * time.Millisecond)
			// The notification is not tied to ctx: a write cut short could
			// leave a partial message on the stream.
			err := p.session.NotifyProgress(context.WithoutCancel(ctx), &mcp.ProgressNotificationParams{
				ProgressToken: p.token,
				Progress:      float64(n),
				Message:       fmt.Sprintf("waiting for %s: %s so far", method, waited),
			})
			if err != nil {
				return // the session is gone
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// needsSession reports whether a tools/call of tool name, whose request
// asked for progress or not, must be served by the go-sdk, which has the
// session to send progress notifications or to ask the user for
// confirmation, rather than by the stdio direct path.
func (s *Server) needsSession(name string, progress bool) bool {
	if r, ok := s.routes.Load().byName[name]; ok && r.confirm {
		return true
	}
	return progress && s.cfg.ProgressInterval > 0
}

// progressTokenIn reports whether a request's decoded params._meta asks for
// progress: a progressToken that is not null.
func progressTokenIn(meta map[string]json.RawMessage) bool {
	t := meta["progressToken"]
	return len(t) > 0 && string(t) != "null"
}
