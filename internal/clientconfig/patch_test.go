package clientconfig

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// applyPatch applies a JSON merge patch (RFC 7396) to v.
func applyPatch(v, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	out, _ := v.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for k, pv := range p {
		if pv == nil {
			delete(out, k)
		} else {
			out[k] = applyPatch(out[k], pv)
		}
	}
	return out
}

// TestPatchIsMerge: the patch of fields, applied to the file as RFC 7396
// says, gives the entry Merge gives, and the rest of the file as it was; it
// holds nothing of the user's.
func TestPatchIsMerge(t *testing.T) {
	for _, have := range []string{
		`null`,
		`{"command":"/old","env":{"MY_API_KEY":"sk-live"},"credentials":"sk-live"}`,
		`{"url":"http://x/mcp","transport":"streamable-http","headers":{"X-Custom-Auth":"sk-live","Authorization":"Bearer old"}}`,
	} {
		for _, fields := range [][]Field{owned(false, "", ""), owned(false, "http://127.0.0.1:8765/mcp", "${T}"), owned(true, "http://h/mcp", "t")} {
			var entry map[string]any
			if err := json.Unmarshal([]byte(have), &entry); err != nil {
				t.Fatal(err)
			}
			file := map[string]any{"agents": "mine", "mcp": map[string]any{"servers": map[string]any{"other": "x"}}}
			if entry != nil {
				file["mcp"].(map[string]any)["servers"].(map[string]any)["tairseach"] = entry
			}
			patch := Patch([]string{"mcp", "servers", "tairseach"}, fields)
			var p any
			if err := json.Unmarshal(patch, &p); err != nil {
				t.Fatalf("%s: %v", patch, err)
			}
			got := applyPatch(file, p).(map[string]any)
			want := map[string]any{"agents": "mine", "mcp": map[string]any{"servers": map[string]any{"other": "x", "tairseach": Merge(entry, fields)}}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("entry %s, patch %s:\ngot  %v\nwant %v", have, patch, got, want)
			}
			if bytes.Contains(patch, []byte("sk-live")) || bytes.Contains(patch, []byte("old")) {
				t.Errorf("the patch holds the user's values: %s", patch)
			}
		}
	}
}
