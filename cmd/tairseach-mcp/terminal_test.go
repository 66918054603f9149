package main

import (
	"strings"
	"testing"
)

// TestNoGreetingOffTerminal: started by a client (stdin a pipe), the server
// logs as before and says nothing else.
func TestNoGreetingOffTerminal(t *testing.T) {
	cleanEnv(t)
	e := newEnv(t)
	_, stderr, code := cli("", "--manifests", e.manifests, "--socket", e.socket)
	if code != 0 || strings.Contains(stderr, "waiting for an MCP client") || !strings.Contains(stderr, "serving") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
