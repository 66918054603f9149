package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClosedStdoutEndsTheSession: a client that closes the reader of the
// bridge's stdout mid-stream, with calls in flight and its stdin still
// open, ends the session as its end of input would. The write that finds
// stdout closed does not kill the process (SIGPIPE); the bridge takes no
// more requests, lets the calls in flight end, and exits 0 by itself; and
// every call that reached the backend's socket has its audit line.
func TestClosedStdoutEndsTheSession(t *testing.T) {
	dir := shortDir(t)
	socket := filepath.Join(dir, "d.sock")
	// The backend logs each call it served (trace): what reached the socket.
	backendLog := &syncBuffer{}
	backend := exec.Command(demoBin, "--socket", socket, "--log-level", "trace")
	backend.Stderr = backendLog
	if err := backend.Start(); err != nil {
		t.Fatal(err)
	}
	backendDone := make(chan struct{})
	go func() { _ = backend.Wait(); close(backendDone) }()
	stopBackend := func() {
		_ = backend.Process.Signal(os.Interrupt)
		select {
		case <-backendDone:
		case <-time.After(5 * time.Second):
			_ = backend.Process.Kill()
			<-backendDone
		}
	}
	defer stopBackend()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(backendLog.String(), "listening"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("demo backend did not start within 10s")
		}
	}

	audit := filepath.Join(dir, "audit.jsonl")
	bridge := exec.Command(bridgeBin, "--manifests", filepath.Join(repoRoot, "manifests.example"), "--socket", socket, "--audit-log", audit)
	stderr := &syncBuffer{}
	bridge.Stderr = stderr
	stdin, err := bridge.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bridge.Stdout = w
	if err := bridge.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the bridge holds the only writer
	exited := make(chan error, 1)
	go func() { exited <- bridge.Wait() }()
	defer func() {
		stdin.Close()
		_ = bridge.Process.Kill()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	}()

	const calls = 30
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	for i := range calls {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":%d}}}`, i+1, 50*(i%10)))
	}
	if _, err := io.WriteString(stdin, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(r)
	for range 3 { // initialize's answer and two calls'
		if _, err := out.ReadString('\n'); err != nil {
			t.Fatalf("reading stdout: %v", err)
		}
	}
	r.Close() // mid-stream: the other calls are in flight or queued

	// stdin stays open: the session must end by itself.
	select {
	case err = <-exited:
	case <-time.After(15 * time.Second):
		t.Fatal("still running 15 s after its stdout was closed")
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("exit after stdout closed: %v (want 0, as at end of input)", err)
	} else if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "stdout closed by the client") {
		t.Errorf("stderr does not say stdout was closed")
	}

	stopBackend() // every call it was sent has ended by now: each is logged
	reached := 0
	for _, l := range strings.Split(backendLog.String(), "\n") {
		if strings.Contains(l, " call ") && strings.Contains(l, "method=demo.slow") {
			reached++
		}
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	audited := strings.Count(string(b), "\n")
	if reached < 3 || audited != reached {
		t.Errorf("%d calls reached the socket, %d audit lines; want one line for each", reached, audited)
	}
	t.Logf("%d calls sent, %d reached the socket, %d audit lines", calls, reached, audited)
}

// TestClosedStderrIsNotFatal: a client that stops reading the bridge's
// stderr (its log) loses the log, not the session: every call is
// answered and the bridge exits 0 at the end of input. Before, the first
// log line written after killed the process (SIGPIPE on fd 2).
func TestClosedStderrIsNotFatal(t *testing.T) {
	b := startBackend(t, filepath.Join(shortDir(t), "d.sock"))
	bridge := exec.Command(bridgeBin, "--manifests", filepath.Join(repoRoot, "manifests.example"), "--socket", b.path, "--log-level", "debug")
	stdin, err := bridge.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := bridge.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	bridge.Stderr = w
	if err := bridge.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer func() { stdin.Close(); _ = bridge.Process.Kill() }()
	if _, err := bufio.NewReader(r).ReadString('\n'); err != nil {
		t.Fatalf("reading stderr: %v", err)
	}
	r.Close() // the log goes nowhere from now on

	const calls = 5
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	for i := range calls {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_demo_echo","arguments":{"i":%d}}}`, i+1, i))
	}
	if _, err := io.WriteString(stdin, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	out, err := io.ReadAll(stdout)
	if err != nil {
		t.Fatal(err)
	}
	if err := bridge.Wait(); err != nil {
		t.Fatalf("exit with stderr closed: %v (want 0)", err)
	}
	if n := strings.Count(string(out), "\n"); n != calls+1 {
		t.Errorf("%d answers, want %d:\n%s", n, calls+1, out)
	}
}
