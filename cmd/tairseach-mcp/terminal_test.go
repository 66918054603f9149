package main

import (
	"strings"
	"testing"
)

// TestNoGreetingOffTerminal: started by a client (stdin a pipe), the server
// logs at the level asked for and says nothing else.
func TestNoGreetingOffTerminal(t *testing.T) {
	cleanEnv(t)
	e := newEnv(t)
	_, stderr, code := cli("", "--manifests", e.manifests, "--socket", e.socket, "--log-level", "info")
	if code != 0 || strings.Contains(stderr, "waiting for an MCP client") || !strings.Contains(stderr, "serving") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
