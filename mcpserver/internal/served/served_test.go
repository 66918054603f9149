package served

import (
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
)

func TestBy(t *testing.T) {
	get := manifest.Tool{Name: "contacts_get", Method: "contacts.get", File: "contacts.json"}
	for _, c := range []struct {
		method, file string
		want         bool
	}{
		{"contacts.get", "contacts.json", true},
		{"contacts.get", "", true},                // any manifest's tool
		{"contacts.get", "other.json", false},     // another manifest declares it: its own tools serve it
		{"contacts.list", "contacts.json", false}, // another method
		{"contacts.list", "", false},
	} {
		if got := By(get, c.method, c.file); got != c.want {
			t.Errorf("By(%s of %s, %q, %q) = %v, want %v", get.Method, get.File, c.method, c.file, got, c.want)
		}
	}
	if Any(nil, "contacts.get", "") || !Any([]manifest.Tool{{Method: "a"}, get}, "contacts.get", "contacts.json") {
		t.Error("Any is not By of some tool")
	}
}
