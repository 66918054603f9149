package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
)

// TestInstructionsWithinTwoKB: however many toolsets the manifests have,
// the instructions stay within MaxInstructionsBytes, naming as many as fit
// first and saying the list goes on; the rules for reading results are
// never cut.
func TestInstructionsWithinTwoKB(t *testing.T) {
	for _, n := range []int{1, 20, 60, 400} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			reg := &manifest.Registry{}
			for i := range n {
				id := fmt.Sprintf("toolset-number-%03d", i)
				reg.Tools = append(reg.Tools, manifest.Tool{Name: fmt.Sprintf("tairseach_t%03d", i), ToolName: id + ".get",
					Method: id + ".get", ManifestID: id, InputSchema: json.RawMessage(`{"type":"object"}`)})
			}
			s := New(Config{DefaultSocket: "/nonexistent.sock", Prefix: "tairseach_", Logger: zerolog.Nop()}, reg)
			defer s.Close()
			got := withKeywords(s.base.routes.Load(), s.cfg.Prefix, instructions)
			if len(got) > MaxInstructionsBytes || !strings.HasSuffix(got, instructions) {
				t.Fatalf("%d bytes, ending with the rules %v:\n%s", len(got), strings.HasSuffix(got, instructions), got)
			}
			first, _, _ := strings.Cut(got, ". ")
			named := strings.Count(first, "toolset number")
			more := strings.HasSuffix(first, ", and more")
			if named == 0 || more != (named < n) || !more && named != n {
				t.Fatalf("%d toolsets: %d named, \"and more\" %v: %s", n, named, more, first)
			}
		})
	}
}
