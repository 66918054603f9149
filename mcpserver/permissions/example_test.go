package permissions_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

func ExampleTracker() {
	// Read would call permissions.list on the Tairseach server.
	read := func(context.Context) (json.RawMessage, error) {
		return json.RawMessage(`{"permissions":[
			{"permission":"contacts","status":"granted","granted":true},
			{"permission":"screen_recording","status":"denied","granted":false}],"total":2}`), nil
	}
	changed := make(chan permissions.Grants, 1)
	t := permissions.NewTracker(permissions.Options{
		Read:     read,
		OnChange: func(_, now permissions.Grants) { changed <- now },
	})
	t.Start(context.Background())
	defer t.Close()

	fmt.Println(<-changed)
	// A tool's manifest.Tool.Permissions, e.g. screen.capture's.
	if p, status, blocked := t.Blocked([]string{"screen_recording"}); blocked {
		fmt.Printf("blocked: %s is %s: %s\n", p, status, permissions.Remediation(p, status))
	}
	// Output:
	// contacts=granted screen_recording=denied
	// blocked: screen_recording is denied: open System Settings › Privacy & Security › Screen Recording (Screen & System Audio Recording on macOS 15 and later) and turn Tairseach on, then quit and reopen the Tairseach app
}
