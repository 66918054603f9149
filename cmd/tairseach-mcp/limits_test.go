package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// manifestOfSize returns a manifest with one tool id.echo, padded with a
// long description to exactly size bytes.
func manifestOfSize(t *testing.T, id string, size int) string {
	t.Helper()
	const head, tail = `{"id":"%s","tools":[{"name":"%s.echo","description":"`, `","inputSchema":{"type":"object"}}],"implementation":{"methods":{"%s.echo":"demo.echo"}}}`
	frame := fmt.Sprintf(head, id, id) + fmt.Sprintf(tail, id)
	if size < len(frame) {
		t.Fatalf("a manifest is at least %d bytes", len(frame))
	}
	return fmt.Sprintf(head, id, id) + strings.Repeat("d", size-len(frame)) + fmt.Sprintf(tail, id)
}

// TestMaxManifestBytes checks --max-manifest-bytes: a file over the limit is
// skipped with an error naming its size and the limit, and the others load,
// in every command that reads manifests and in serve.
func TestMaxManifestBytes(t *testing.T) {
	cleanEnv(t)
	t.Setenv("TAIRSEACH_MCP_MAX_MANIFEST_BYTES", "")
	const limit = 2000
	dir := shortDir(t)
	for name, size := range map[string]int{"small.json": 500, "exact.json": limit, "big.json": limit + 1} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(manifestOfSize(t, strings.TrimSuffix(name, ".json"), size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tooBig := fmt.Sprintf("big.json: error: file too large: %d bytes, the limit is %d", limit+1, limit)
	base := []string{"--manifests", dir, "--socket", fixedSocket}

	toolsOf := func(t *testing.T, stdout string) []string {
		t.Helper()
		var tools []struct{ Name string }
		if err := json.Unmarshal([]byte(stdout), &tools); err != nil {
			t.Fatalf("tools --json: %v\n%s", err, stdout)
		}
		var names []string
		for _, tool := range tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		return names
	}
	t.Run("validate", func(t *testing.T) {
		stdout, stderr, code := cli("", append(base, "--max-manifest-bytes", fmt.Sprint(limit), "validate")...)
		if code != 1 || !strings.Contains(stdout, filepath.Join(dir, tooBig)) || !strings.Contains(stderr, "3 files, 2 tools, 1 error") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1 and %q", code, stdout, stderr, tooBig)
		}
	})
	t.Run("validate files", func(t *testing.T) {
		stdout, stderr, code := cli("", "--max-manifest-bytes", fmt.Sprint(limit), "validate", filepath.Join(dir, "big.json"), filepath.Join(dir, "small.json"))
		if code != 1 || !strings.Contains(stdout, filepath.Join(dir, tooBig)) || !strings.Contains(stderr, "2 files, 1 tool, 1 error") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("tools", func(t *testing.T) {
		stdout, stderr, code := cli("", append(base, "--max-manifest-bytes", fmt.Sprint(limit), "tools", "--json")...)
		if got, want := toolsOf(t, stdout), []string{"tairseach_exact_echo", "tairseach_small_echo"}; code != 0 || !slices.Equal(got, want) {
			t.Fatalf("exit %d, tools %v, want %v\nstderr:\n%s", code, got, want, stderr)
		}
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv("TAIRSEACH_MCP_MAX_MANIFEST_BYTES", fmt.Sprint(limit))
		stdout, stderr, code := cli("", append(base, "tools", "--json")...)
		if got := toolsOf(t, stdout); code != 0 || len(got) != 2 {
			t.Fatalf("exit %d, tools %v\nstderr:\n%s", code, got, stderr)
		}
	})
	t.Run("default", func(t *testing.T) {
		stdout, stderr, code := cli("", append(base, "tools", "--json")...)
		if got := toolsOf(t, stdout); code != 0 || len(got) != 3 {
			t.Fatalf("with the default limit (4 MiB): exit %d, tools %v\nstderr:\n%s", code, got, stderr)
		}
	})
	t.Run("not positive", func(t *testing.T) {
		_, stderr, code := cli("", append(base, "--max-manifest-bytes", "0", "tools")...)
		if code != 2 || !strings.Contains(stderr, "--max-manifest-bytes 0: must be positive") {
			t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
		}
	})
	t.Run("serve", func(t *testing.T) {
		e := env{socket: filepath.Join(shortDir(t), "s.sock"), manifests: dir}
		cs := connect(t, e, "2025-11-25", "--max-manifest-bytes", fmt.Sprint(limit))
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if want := []string{"tairseach_exact_echo", "tairseach_result_part", "tairseach_small_echo"}; !slices.Equal(names, want) {
			t.Fatalf("tools/list = %v, want %v", names, want)
		}
	})
}
