package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the master, and the terminal a
// process gets as stdin.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Fatalf("naming the pty: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatalf("opening the pty: %v", err)
	}
	return m, s
}

// TestBareStartOnTerminal starts the real binary with a terminal as stdin:
// one line on stderr says what it is and what to try, and no log lines.
func TestBareStartOnTerminal(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct {
		name  string
		extra []string
		logs  bool
	}{
		{name: "bare"},
		{name: "log level asked for", extra: []string{"--log-level", "info"}, logs: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			master, tty := openPTY(t)
			defer master.Close()
			cmd := exec.Command(bridgeBin, append([]string{"--manifests", e.manifests, "--socket", e.socket}, tt.extra...)...)
			cmd.Env = append(os.Environ(), "TAIRSEACH_MANIFESTS=", "TAIRSEACH_SOCKET=", "TAIRSEACH_MCP_LOG_LEVEL=")
			var stderr syncBuffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &bytes.Buffer{}, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(stderr.String(), "\n") && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			// Ctrl-D: stdin ends. The start-up lines, if any, are written
			// before stdin is read, so by the exit.
			if _, err := master.Write([]byte{4}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("the server did not stop at Ctrl-D; stderr:\n%s", stderr.String())
			}
			out := stderr.String()
			first, rest, _ := strings.Cut(out, "\n")
			if !strings.Contains(first, "waiting for an MCP client on stdin") || !strings.Contains(first, "tairseach-mcp install claude-desktop") {
				t.Errorf("first line %q: want what this is and what to try", first)
			}
			if tt.logs != (rest != "") {
				t.Errorf("log lines after the first: %v, want %v; stderr:\n%s", !tt.logs, tt.logs, out)
			}
		})
	}
}
