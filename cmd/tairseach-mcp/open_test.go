package main

// Every command that shows or calls what the server serves opens it the
// way serve does, and reads the macOS permissions as serve does: what it
// lists is what a client would be offered.

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/demo"
)

// startDemoIn runs the demo backend in this process with opts, on a short
// socket path, and returns the path and the backend's log, one line per
// call it answered.
func startDemoIn(t *testing.T, opts demo.Options) (path string, calls *syncBuffer) {
	t.Helper()
	path = filepath.Join(shortDir(t), "s.sock")
	ln, err := demo.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	calls = &syncBuffer{}
	d := demo.New(zerolog.New(calls).Level(zerolog.TraceLevel), opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = d.Serve(ctx, ln)
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return path, calls
}

// TestCommandsSeeTheGrants: with contacts denied, the listing commands
// leave out the contacts tools, prompt and resources, as a client is
// offered them, each after one read of the grants: none waits for a read
// that never comes and then lists everything.
func TestCommandsSeeTheGrants(t *testing.T) {
	cleanEnv(t)
	noFeatureDirs(t)
	prompts := filepath.Join(exampleDir, "prompts")
	for _, tt := range []struct {
		command       []string
		offered, left []string
	}{
		{[]string{"prompts"}, []string{"find-contact", "day-plan"}, []string{"contact-card"}},
		{[]string{"prompts", "--json"}, []string{`"find-contact"`}, []string{`"contact-card"`}},
		{[]string{"resources"}, []string{"tairseach://manifests/demo", "tairseach://status"},
			[]string{"tairseach://contacts", "tairseach://manifests/contacts"}},
		{[]string{"resources", "--json"}, []string{`"tairseach://manifests/demo"`}, []string{`"tairseach://contacts`, `"tairseach://manifests/contacts"`}},
		{[]string{"tools"}, []string{"tairseach_demo_echo"}, []string{"tairseach_contacts_"}},
	} {
		t.Run(strings.Join(tt.command, " "), func(t *testing.T) {
			sock, calls := startDemoIn(t, demo.Options{Grants: map[string]string{"contacts": demo.Denied}})
			args := append([]string{"--manifests", exampleDir, "--socket", sock, "--prompts-dir", prompts}, tt.command...)
			stdout, stderr, code := cli("", args...)
			if code != 0 {
				t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, s := range tt.offered {
				if !strings.Contains(stdout, s) {
					t.Errorf("%s is not listed:\n%s", s, stdout)
				}
			}
			for _, s := range tt.left {
				if strings.Contains(stdout, s) {
					t.Errorf("%s is listed, though its permission is denied:\n%s", s, stdout)
				}
			}
			if n := strings.Count(calls.String(), `"method":"permissions.list"`); n != 1 {
				t.Errorf("the backend answered permissions.list %d times, want once\nbackend log:\n%s", n, calls.String())
			}
			if stderr != "" {
				t.Errorf("stderr: %q, want nothing", stderr)
			}
		})
	}
}
