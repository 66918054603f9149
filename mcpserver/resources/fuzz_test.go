package resources

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// FuzzMatchTemplate: whatever the URI, a matched variable never holds what
// would let it escape its place.
func FuzzMatchTemplate(f *testing.F) {
	for _, s := range []string{"tairseach://contacts/c-001", "tairseach://contacts/a%2Fb", "tairseach://contacts/%2e%2e",
		"tairseach://contacts/a%00", "tairseach://contacts/%zz", "tairseach://contacts/x?y", "tairseach://contacts/"} {
		f.Add(s)
	}
	re := templateRegexp("tairseach://contacts/{id}")
	f.Fuzz(func(t *testing.T, uri string) {
		params, err := MatchTemplate(re, []string{"id"}, uri)
		if err != nil {
			return
		}
		var p map[string]string
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatalf("params %s: %v", params, err)
		}
		v := p["id"]
		if v == "" || strings.ContainsAny(v, "/\\?#") || strings.Contains(v, "..") || strings.ContainsFunc(v, unicode.IsControl) {
			t.Fatalf("%q matched with id %q", uri, v)
		}
	})
}
