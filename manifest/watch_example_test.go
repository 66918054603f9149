package manifest_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/geilt/tairseach-mcp/manifest"
)

// A server loads the manifests before it answers its first request, then
// keeps them up to date until it shuts down.
func ExampleWatcher() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	w, err := manifest.NewWatcher("manifests", manifest.WatchOptions{}, func(r manifest.Reload) {
		if r.ToolsChanged {
			fmt.Println("serving", len(r.Registry.Tools), "tools") // and tell the clients
		}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println("serving", len(w.Registry().Tools), "tools")

	// Where file notifications are unreliable, reload on SIGHUP.
	reload := make(chan os.Signal, 1)
	signal.Notify(reload, syscall.SIGHUP)
	defer signal.Stop(reload)

	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	for {
		select {
		case <-reload:
			w.Reload()
		case err := <-done:
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
			return
		}
	}
}
