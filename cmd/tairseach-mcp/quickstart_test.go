package main

// The README's quickstart as a new user runs it: make install puts the
// binary in ~/.local/bin, tairseach-mcp doctor and tairseach-mcp install
// claude-desktop run from there, then the command the entry names,
// started the way Claude Desktop starts it (an environment of its own, a
// directory of its own), answering tools/list and a call.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// claudeDesktopConfig is where Claude Desktop reads its servers under home.
func claudeDesktopConfig(home string) string {
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
	}
	return filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
}

// startEntry starts the tairseach entry of a Claude Desktop config file
// as Claude Desktop would, and connects to it.
func startEntry(t *testing.T, configFile, home string) *mcp.ClientSession {
	t.Helper()
	b, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", configFile, err)
	}
	entry, ok := cfg.MCPServers["tairseach"]
	if !ok || !filepath.IsAbs(entry.Command) {
		t.Fatalf("%s: no tairseach entry with an absolute command:\n%s", configFile, b)
	}
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"} // not the shell's: no TAIRSEACH_*
	cmd.Dir = "/"
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting the entry %s %q: %v\nstderr:\n%s", entry.Command, entry.Args, err, stderr.String())
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	return cs
}

func checkContacts(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if names := toolNames(t, cs); !slices.Contains(names, "tairseach_contacts_search") {
		t.Fatalf("tools/list: %v, want tairseach_contacts_search", names)
	}
	res := callTool(t, cs, "tairseach_contacts_get", map[string]any{"id": "c-001"})
	if res.IsError || !strings.Contains(text(res), "c-001") {
		t.Errorf("contacts.get: isError %v, %s", res.IsError, text(res))
	}
}

// TestQuickstart follows the README's quickstart on a fresh HOME.
func TestQuickstart(t *testing.T) {
	home := shortDir(t)
	// What the Tairseach app provides: manifests and the socket.
	for _, name := range []string{"contacts.json", "server.json"} {
		copyFile(t, filepath.Join(repoRoot, "manifests.example", name), filepath.Join(home, ".tairseach", "manifests", name), 0o644)
	}
	startBackend(t, filepath.Join(home, ".tairseach", "tairseach.sock"))

	// make install, its build left out (-o build): the binary TestMain
	// built stands in for bin/tairseach-mcp.
	environ := []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	cmd := exec.Command("make", "-o", "build", "install", "BIN="+filepath.Dir(bridgeBin))
	cmd.Dir = repoRoot
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	bin := filepath.Join(home, ".local", "bin", "tairseach-mcp")
	if err != nil || !strings.Contains(string(out), "installed "+bin) || !strings.Contains(string(out), "is not on PATH") {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if fi, err := os.Stat(bin); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("make install: %v, %v", fi, err)
	}

	// ~/.local/bin/tairseach-mcp doctor
	cmd = exec.Command(bin, "doctor")
	cmd.Env = environ
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out)
	}

	// ~/.local/bin/tairseach-mcp install claude-desktop
	cmd = exec.Command(bin, "install", "claude-desktop")
	cmd.Env = environ
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "added the tairseach entry") || strings.Contains(string(out), "not exist") {
		t.Fatalf("install claude-desktop: %v\n%s", err, out)
	}
	checkContacts(t, startEntry(t, claudeDesktopConfig(home), home))
}

// TestQuickstartEnvironment: settings made through the environment reach
// the entry, though Claude Desktop does not see the shell's environment.
func TestQuickstartEnvironment(t *testing.T) {
	home := shortDir(t)
	e := newEnv(t)
	startBackend(t, e.socket)
	config := filepath.Join(home, "claude.json")
	cmd := exec.Command(bridgeBin, "install", "claude-desktop", "--config", config)
	cmd.Env = []string{"HOME=" + home, "TAIRSEACH_SOCKET=" + e.socket, "TAIRSEACH_MANIFESTS=" + e.manifests}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "TAIRSEACH_SOCKET carried into the entry") {
		t.Fatalf("install claude-desktop: %v\n%s", err, out)
	}
	checkContacts(t, startEntry(t, config, home))
}
