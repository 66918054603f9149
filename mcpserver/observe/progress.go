package observe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProgressSink is where progress notifications go: the client's session.
type ProgressSink interface {
	NotifyProgress(context.Context, *mcp.ProgressNotificationParams) error
}

// DefaultProgressInterval is how often a call whose request carries a
// progressToken is reported on while the backend works on it.
const DefaultProgressInterval = 5 * time.Second

// StartProgress sends notifications/progress to peer every interval until
// the returned stop is called; stop returns once no notification can be
// sent any more, so that none follows the response. progress counts the
// intervals waited: it only grows.
func StartProgress(ctx context.Context, peer ProgressSink, token any, interval time.Duration, method string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		t := time.NewTicker(interval)
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
			err := peer.NotifyProgress(context.WithoutCancel(ctx), &mcp.ProgressNotificationParams{
				ProgressToken: token,
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
