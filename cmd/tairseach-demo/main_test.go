package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// run runs the command with args and returns its error and what it wrote.
func run(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := newRootCmd(&out)
	cmd.SetOut(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "demo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestHelpDescribesPermissions(t *testing.T) {
	out, err := run(context.Background(), "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--grants contacts=denied", "--grants-file PATH", "demo.setPermission", "not_determined", "-32001"} {
		if !strings.Contains(out, want) {
			t.Errorf("help does not mention %q:\n%s", want, out)
		}
	}
}

func TestBadGrants(t *testing.T) {
	dir := shortTempDir(t)
	broken := filepath.Join(dir, "grants")
	if err := os.WriteFile(broken, []byte("contacts=maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--grants", "contacts"}, `--grants: "contacts": want permission=status`},
		{[]string{"--grants", "bluetooth=granted"}, `--grants: "bluetooth=granted": unknown permission "bluetooth"`},
		{[]string{"--grants-file", broken}, `--grants-file: ` + broken + `: "contacts=maybe": unknown status "maybe"`},
	}
	for _, tt := range tests {
		_, err := run(context.Background(), append([]string{"--socket", sock}, tt.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
		if _, err := os.Stat(sock); err == nil {
			t.Errorf("%v: socket created", tt.args)
		}
	}
}

// TestServeGrants starts the command with --grants and a --grants-file that
// does not exist yet, then writes the file and sees the statuses change.
func TestServeGrants(t *testing.T) {
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "s.sock")
	file := filepath.Join(dir, "grants")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := run(ctx, "--socket", sock, "--log-level", "error", "--grants", "contacts=denied,camera=not_determined", "--grants-file", file)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	var conn net.Conn
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			conn = c
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	statuses := func() map[string]string {
		t.Helper()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"permissions.list"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Result struct {
				Permissions []struct{ Permission, Status string }
			}
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		m := map[string]string{}
		for _, p := range resp.Result.Permissions {
			if p.Status != "granted" {
				m[p.Permission] = p.Status
			}
		}
		return m
	}
	if got := statuses(); len(got) != 2 || got["contacts"] != "denied" || got["camera"] != "not_determined" {
		t.Errorf("not granted at start: %v", got)
	}
	if err := os.WriteFile(file, []byte("contacts=granted\nscreen_recording=denied\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := statuses(); len(got) != 2 || got["screen_recording"] != "denied" || got["camera"] != "not_determined" {
		t.Errorf("not granted after the file was written: %v", got)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the demo did not stop")
	}
	if _, err := os.Stat(sock); err == nil {
		t.Error("socket left behind")
	}
}
