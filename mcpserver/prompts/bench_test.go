package prompts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
)

// promptsDir makes a prompts directory of n prompt files and others
// files that are not prompts.
func promptsDir(tb testing.TB, n, others int) string {
	tb.Helper()
	dir := tb.TempDir()
	for i := range n {
		body := fmt.Sprintf("---\ndescription: prompt %d\narguments:\n  - name: who\n---\nFind {{who}} in the notes of day %d.\n", i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%04d.md", i)), []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range others {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("notes-%05d.txt", i)), nil, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// BenchmarkReload reads a prompts directory again and serves it onto 20
// servers (HTTP header selections): the most prompt files served (a real
// directory has a few dozen) among 10,000 other files.
func BenchmarkReload(b *testing.B) {
	s := New(Config{Dir: promptsDir(b, MaxFiles, 10_000), Logger: zerolog.Nop()})
	for i := range 20 {
		opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}}
		register := s.Attach(opts, backend.View{})
		register(mcp.NewServer(&mcp.Implementation{Name: fmt.Sprint("s", i)}, opts))
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Reload()
	}
	if len(s.files) != MaxFiles {
		b.Fatalf("%d prompts, want %d", len(s.files), MaxFiles)
	}
}

// BenchmarkGetHuge asks for a prompt whose short template repeats its
// argument 10,000 times, with an argument of 100 KiB: a gigabyte of text,
// were it made.
func BenchmarkGetHuge(b *testing.B) {
	dir := b.TempDir()
	body := "---\narguments:\n  - name: a\n---\n" + strings.Repeat("{{a}}", 10_000) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "amp.md"), []byte(body), 0o600); err != nil {
		b.Fatal(err)
	}
	s := New(Config{Dir: dir, MaxBytes: 8 << 20, Logger: zerolog.Nop()})
	get := s.get(s.files[0])
	req := &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{Name: "amp", Arguments: map[string]string{"a": strings.Repeat("x", 100<<10)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := get(context.Background(), req); err == nil || !strings.Contains(err.Error(), "over the limit") {
			b.Fatalf("got %v, want the limit's refusal", err)
		}
	}
}

// A prompt is not rendered into a text over the limit: a template that
// repeats an argument would make the text that many times the argument.
func TestGetBoundsTheText(t *testing.T) {
	dir := t.TempDir()
	body := "---\narguments:\n  - name: a\n---\n" + strings.Repeat("{{a}} ", 100) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "amp.md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s := New(Config{Dir: dir, MaxBytes: 64 << 10, Logger: zerolog.Nop()})
	get := s.get(s.files[0])
	for _, tt := range []struct {
		arg  int
		fits bool
	}{{600, true}, {1000, false}} {
		req := &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{Name: "amp", Arguments: map[string]string{"a": strings.Repeat("x", tt.arg)}}}
		res, err := get(context.Background(), req)
		if tt.fits && (err != nil || len(res.Messages[0].Content.(*mcp.TextContent).Text) != 100*(tt.arg+1)+1) {
			t.Fatalf("an argument of %d bytes: %v", tt.arg, err)
		}
		if !tt.fits && (err == nil || !strings.Contains(err.Error(), "would be 100101 bytes, over the limit of 65536 (--max-result-bytes)")) {
			t.Fatalf("an argument of %d bytes: %v, want the limit's refusal", tt.arg, err)
		}
	}
}
