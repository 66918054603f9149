package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuditLogKilledMidLoad: SIGKILL ends the real binary while 8 callers
// keep it busy, four times over, each time appending to the same audit
// log. Nothing of the process's own can run at a SIGKILL, so this is what
// the file itself must hold: every line on disk is whole (it parses as
// JSON). With --audit-sync every call whose answer the client read has its
// line, as such a call is answered only once its line is written; without
// it, a line waits up to 10 ms to be written with others, so the
// calls answered just before the kill may have none, but no call answered
// lossWindow or more before it.
func TestAuditLogKilledMidLoad(t *testing.T) {
	dir := shortDir(t)
	b := startBackend(t, filepath.Join(dir, "d.sock"))
	audit := filepath.Join(dir, "audit.jsonl")
	type answer struct {
		at   time.Duration // before the kill
		sync bool
	}
	answered := map[string]answer{} // by request id, as audit lines give it
	rounds := []struct {
		after time.Duration
		sync  bool
	}{{300 * time.Millisecond, false}, {600 * time.Millisecond, false}, {250 * time.Millisecond, true}, {450 * time.Millisecond, false}}
	for round, r := range rounds {
		var args []string
		if r.sync {
			args = []string{"--audit-sync"}
		}
		for id, before := range killMidLoad(t, b.path, audit, round, r.after, args...) {
			answered[id] = answer{before, r.sync}
		}
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("the audit log ends in a line cut short: %q", data[max(0, len(data)-120):])
	}
	lines, recorded := 0, map[string]bool{}
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var rec struct {
			RequestID json.RawMessage `json:"request_id"`
			Outcome   string
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d is not whole JSON (%v): %q", i+1, err, l)
		}
		lines++
		recorded[string(rec.RequestID)] = true
	}
	missing, late, synced := 0, 0, 0
	for id, a := range answered {
		if a.sync {
			synced++
		}
		if recorded[id] {
			continue
		}
		switch {
		case a.sync:
			missing++
			t.Errorf("call %s, answered with --audit-sync %v before the kill, has no line", id, a.at)
		case a.at >= lossWindow:
			missing++
			t.Errorf("call %s, answered %v before the kill, has no line", id, a.at)
		default:
			late++
		}
	}
	if len(answered) < 100 || synced < 10 {
		t.Errorf("only %d calls answered before the kills, %d of them with --audit-sync: the load did not run", len(answered), synced)
	}
	t.Logf("%d calls answered (%d with --audit-sync), %d lines in the audit log (%d bytes); %d answered within %v of a kill had no line", len(answered), synced, lines, len(data), late, lossWindow)
}

// lossWindow bounds how long before a SIGKILL a call answered may have no
// audit line: its line waits observe.DefaultAuditDelay (10 ms) for the
// timer's write, and a busy machine may run the timer late.
const lossWindow = 200 * time.Millisecond

// killMidLoad starts the bridge with the audit log (and flags), makes
// calls from 8 callers, kills it (SIGKILL) after the given time, and
// returns the ids of the calls whose answers were read, with how long
// before the kill each was.
func killMidLoad(t *testing.T, socket, audit string, round int, after time.Duration, flags ...string) map[string]time.Duration {
	t.Helper()
	cmd := exec.Command(bridgeBin, append([]string{"--manifests", filepath.Join(repoRoot, "manifests.example"), "--socket", socket, "--audit-log", audit}, flags...)...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", stderr.String())
		}
	}()
	var wmu sync.Mutex
	send := func(l string) error {
		wmu.Lock()
		defer wmu.Unlock()
		_, err := io.WriteString(stdin, l+"\n")
		return err
	}
	if err := send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`); err != nil {
		t.Fatal(err)
	}
	_ = send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// One reader: each answer frees its caller for the next call. The
	// calls start once initialize is answered, so that each is served
	// directly, with its id in its line.
	var mu sync.Mutex
	answered := map[string]time.Time{}
	waiting := map[string]chan struct{}{}
	done, ready := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		if sc.Scan() {
			close(ready) // initialize's answer
		}
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage
				Result struct{ IsError bool }
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
				continue
			}
			id := string(m.ID)
			mu.Lock()
			answered[id] = time.Now()
			if ch := waiting[id]; ch != nil {
				close(ch)
				delete(waiting, id)
			}
			mu.Unlock()
		}
	}()
	select {
	case <-ready:
	case <-done:
		t.Fatal("the bridge ended before answering initialize")
	}
	var callers sync.WaitGroup
	for w := range 8 {
		callers.Go(func() {
			for i := 0; ; i++ {
				id := strconv.Quote(fmt.Sprintf("%d-%d-%d", round, w, i))
				ch := make(chan struct{})
				mu.Lock()
				waiting[id] = ch
				mu.Unlock()
				if send(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"tairseach_demo_echo","arguments":{"query":"anna","n":`+strconv.Itoa(i)+`}}}`) != nil {
					return // killed
				}
				select {
				case <-ch:
				case <-done:
					return
				}
			}
		})
	}
	time.Sleep(after)
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	_ = cmd.Wait()
	stdin.Close()
	callers.Wait()
	mu.Lock()
	defer mu.Unlock()
	before := make(map[string]time.Duration, len(answered))
	for id, at := range answered {
		before[id] = killed.Sub(at) // an answer read as the kill landed: < 0
	}
	return before
}
