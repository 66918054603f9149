package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/geilt/tairseach-mcp/manifest"
)

// prefix is the bridge's default tool name prefix, used by every contender.
const prefix = "tairseach_"

// env is what a run sets up once: binaries, the demo backend, tool sets.
type env struct {
	cfg    config
	tmp    string
	floor  string // sdkfloor binary
	socket string // the demo backend's socket
	logs   string // directory of the servers' stderr files

	example toolSet // manifests.example: the call cases
	corpus  toolSet // the real corpus
	gen     toolSet // 1,000 generated tools
	reload  string  // a copy of manifests.example that the reload case edits

	demo     *exec.Cmd
	demoDone chan error

	collector *collector   // bridge+otel's OTLP/HTTP receiver
	audits    atomic.Int64 // bridge+audit files made
	otels     atomic.Int64 // bridge+otel servers started
}

// toolSet is a manifests directory and what the peer needs to serve the
// same tools.
type toolSet struct {
	name      string
	dir       string
	tools     int    // MCP tools the bridge serves
	peerTools string // the peer's TOOLS environment variable
}

func newEnv(ctx context.Context, c config) (_ *env, err error) {
	tmp, err := os.MkdirTemp("", "tbench")
	if err != nil {
		return nil, err
	}
	e := &env{cfg: c, tmp: tmp, logs: filepath.Join(tmp, "logs")}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if err := os.Mkdir(e.logs, 0o755); err != nil {
		return nil, err
	}

	start := time.Now()
	if e.cfg.bridge == "" {
		e.cfg.bridge = filepath.Join(tmp, "tairseach-mcp")
		if err := goBuild(ctx, c.root, e.cfg.bridge, "./cmd/tairseach-mcp"); err != nil {
			return nil, err
		}
	}
	if e.cfg.demo == "" {
		e.cfg.demo = filepath.Join(tmp, "tairseach-demo")
		if err := goBuild(ctx, c.root, e.cfg.demo, "./cmd/tairseach-demo"); err != nil {
			return nil, err
		}
	}
	e.floor = c.floor
	if e.floor == "" {
		e.floor = filepath.Join(tmp, "sdkfloor")
		if err := goBuild(ctx, c.root, e.floor, "./scripts/bench/sdkfloor"); err != nil {
			return nil, err
		}
	}
	for _, p := range []string{e.cfg.bridge, e.cfg.demo, e.floor} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w (run make build, or leave the flag out to build it)", err)
		}
	}
	if e.cfg.peer != "" {
		if _, err := os.Stat(e.cfg.peer); err != nil {
			c.logf("peer %s not found (cd scripts && npm ci); the peer column is n/a", e.cfg.peer)
			e.cfg.peer = ""
		}
	}
	c.logf("built in %s", since(start))

	if e.example, err = e.toolSet("example", filepath.Join(c.root, "manifests.example")); err != nil {
		return nil, err
	}
	if e.corpus, err = e.toolSet("corpus", c.corpus); err != nil {
		return nil, err
	}
	genDir := filepath.Join(tmp, "gen1000")
	if err := generate(genDir, 100, 10); err != nil {
		return nil, err
	}
	if e.gen, err = e.toolSet("1,000 tools", genDir); err != nil {
		return nil, err
	}
	if e.gen.tools != 1000 {
		return nil, fmt.Errorf("generated manifests give %d tools, want 1000", e.gen.tools)
	}
	e.reload = filepath.Join(tmp, "reload")
	if err := copyDir(filepath.Join(c.root, "manifests.example"), e.reload); err != nil {
		return nil, err
	}

	e.socket = filepath.Join(tmp, "d.sock")
	if err := e.startDemo(ctx); err != nil {
		return nil, err
	}
	if e.collector, err = startCollector(); err != nil {
		return nil, err
	}
	return e, nil
}

func goBuild(ctx context.Context, root, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = root
	// Built as make build builds the bridge: static, which starts faster.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	return nil
}

// toolSet loads dir with the manifest package and prepares the peer's TOOLS.
func (e *env) toolSet(name, dir string) (toolSet, error) {
	reg, err := manifest.Load(dir, manifest.Options{Prefix: prefix})
	if err != nil {
		return toolSet{}, fmt.Errorf("loading %s manifests: %w", name, err)
	}
	type peerTool struct {
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description"`
		FunctionName string          `json:"functionName"`
		InputSchema  json.RawMessage `json:"inputSchema"`
	}
	peer := make(map[string]peerTool, len(reg.Tools))
	for _, t := range reg.Tools {
		in := t.InputSchema
		if t.Method == echoMethod {
			// The peer strips arguments its schema does not declare.
			in = peerEchoSchema
		}
		peer[t.Name] = peerTool{Title: t.Title, Description: t.Description, FunctionName: t.Method, InputSchema: in}
	}
	b, err := json.Marshal(peer)
	if err != nil {
		return toolSet{}, err
	}
	return toolSet{name: name, dir: dir, tools: len(reg.Tools), peerTools: string(b)}, nil
}

// peerEchoSchema declares the echo arguments, which the peer's zod
// validation would otherwise strip.
var peerEchoSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"number"},"fields":{"type":"array","items":{"type":"string"}}}}`)

// startDemo starts the demo backend and waits until it listens.
func (e *env) startDemo(ctx context.Context) error {
	cmd := exec.Command(e.cfg.demo, "--socket", e.socket, "--log-level", "warn")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the demo backend: %w", err)
	}
	e.demo = cmd
	ready := make(chan error, 1)
	go func() {
		// Owned by startDemo until ready, then drains stderr until the backend exits.
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			if !found && strings.Contains(sc.Text(), "listening on") {
				found = true
				ready <- nil
				continue
			}
			if found {
				fmt.Fprintf(e.cfg.progress, "demo: %s\n", sc.Text())
			}
		}
		if !found {
			ready <- errors.New("the demo backend exited before listening")
		}
	}()
	e.demoDone = make(chan error, 1)
	go func() { e.demoDone <- cmd.Wait() }()
	select {
	case err := <-ready:
		return err
	case <-time.After(10 * time.Second):
		return errors.New("the demo backend did not say it was listening within 10s")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close stops the demo backend and the collector and removes the temp dir.
func (e *env) close() {
	e.collector.close()
	if e.demo != nil && e.demo.Process != nil {
		_ = e.demo.Process.Signal(syscall.SIGTERM)
		select {
		case <-e.demoDone:
		case <-time.After(5 * time.Second):
			_ = e.demo.Process.Kill()
			<-e.demoDone
		}
	}
	_ = os.RemoveAll(e.tmp)
}

// logFile opens a file for a server's stderr.
func (e *env) logFile(who string) (*os.File, error) {
	return os.OpenFile(filepath.Join(e.logs, who+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// logTail returns the end of a server's stderr file, for error messages.
func (e *env) logTail(who string) string {
	f, err := os.Open(filepath.Join(e.logs, who+".log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	const n = 2000
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return strings.TrimSpace(string(b))
}

func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, ent := range entries {
		if ent.IsDir() || !strings.HasSuffix(ent.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, ent.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, ent.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
