package check

import (
	"encoding/json"
	"testing"
)

// TestCheckArgsAdditionalSorted: jsonschema-go lists unexpected properties
// in map order; the message names them sorted, the same every time, and so
// does its own message where that is the one given.
func TestCheckArgsAdditionalSorted(t *testing.T) {
	in, err := NewInput(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)).inputCheck()
	if err != nil {
		t.Fatal(err)
	}
	const want = `unexpected arguments "b", "c \"quoted\"", "d", "e", "f"`
	for range 20 {
		if got := checkArgs(in, json.RawMessage(`{"a":"x","f":1,"d":2,"c \"quoted\"":3,"b":4,"e":5}`)); got != want {
			t.Fatalf("checkArgs = %s, want %s", got, want)
		}
	}
	for _, msg := range []string{"unexpected additional properties [", `unexpected additional properties ["a" x]`, "other"} {
		if got := sortAdditional(msg); got != msg {
			t.Errorf("sortAdditional(%q) = %q, want it unchanged", msg, got)
		}
	}
}
