package exact

import "testing"

func TestKept(t *testing.T) {
	for _, tt := range []struct {
		raw       string
		token, id bool
	}{
		{`1`, true, true},
		{`-42`, true, true},
		{`9007199254740992`, true, true},
		{`9007199254740993`, false, false},
		{`12345678901234567890`, false, false},
		{`1e3`, false, false},
		{`1000`, true, true},
		{`1.50`, false, false},
		{`1.5`, true, false},
		{`-0`, true, false},
		{`0`, true, true},
		{`"a"`, true, true},
		{`"\u0041"`, false, false},
		{`"<&>"`, true, true},
		{`"\u2028"`, true, true},
		{"\"\u2028\"", false, false},
		{`"\/"`, false, false},
		// Not ids: the go-sdk refuses them (400 over HTTP), so they are not swapped.
		{`null`, true, true},
		{`{"a":1}`, true, true},
		{`[1]`, true, true},
		{`true`, true, true},
	} {
		if got := Token([]byte(tt.raw)); got != tt.token {
			t.Errorf("Token(%s) = %v, want %v", tt.raw, got, tt.token)
		}
		if got := ID([]byte(tt.raw)); got != tt.id {
			t.Errorf("ID(%s) = %v, want %v", tt.raw, got, tt.id)
		}
	}
}
