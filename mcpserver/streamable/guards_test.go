package streamable

import (
	"net/http/httptest"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1":        true,
		"127.0.0.1:8765":   true,
		"127.1.2.3:80":     true,
		"localhost":        true,
		"LOCALHOST:8765":   true,
		"::1":              true,
		"[::1]":            true,
		"[::1]:8765":       true,
		"":                 false,
		"0.0.0.0":          false,
		"0.0.0.0:8765":     false,
		"[::]:8765":        false,
		"10.0.0.1":         false,
		"192.168.1.2:80":   false,
		"evil.example.com": false,
		"localhost.evil":   false,
		"127.0.0.1.evil":   false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestCrossOrigin(t *testing.T) {
	for _, tc := range []struct {
		header map[string][]string
		cross  bool
	}{
		{nil, false},
		{map[string][]string{"Origin": {"http://127.0.0.1:8765"}}, false},
		{map[string][]string{"Origin": {"HTTP://127.0.0.1:8765"}}, false},
		{map[string][]string{"Sec-Fetch-Site": {"same-origin"}}, false},
		{map[string][]string{"Sec-Fetch-Site": {"none"}}, false},
		{map[string][]string{"Origin": {"http://127.0.0.1:8766"}}, true},
		{map[string][]string{"Origin": {"http://localhost:8765"}}, true},
		{map[string][]string{"Origin": {"null"}}, true},
		{map[string][]string{"Origin": {"file://"}}, true},
		{map[string][]string{"Origin": {"chrome-extension://abc"}}, true},
		{map[string][]string{"Origin": {"http://127.0.0.1:8765", "http://evil"}}, true},
		{map[string][]string{"Sec-Fetch-Site": {"cross-site"}}, true},
		{map[string][]string{"Sec-Fetch-Site": {"same-site"}}, true},
		{map[string][]string{"Sec-Fetch-Site": {"same-origin", "cross-site"}}, true},
		{map[string][]string{"Sec-Fetch-Site": {"same-origin"}, "Origin": {"http://evil"}}, true},
	} {
		for _, method := range []string{"GET", "HEAD", "OPTIONS", "POST", "DELETE"} {
			r := httptest.NewRequest(method, "http://127.0.0.1:8765/mcp", nil)
			r.Header = tc.header
			if why := crossOrigin(r); (why != "") != tc.cross {
				t.Errorf("%s %v: crossOrigin = %q, want cross %v", method, tc.header, why, tc.cross)
			}
		}
	}
}
