package socketrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestIDMatches(t *testing.T) {
	tests := []struct {
		raw  string
		id   uint64
		want bool
	}{
		{"7", 7, true},
		{"7.0", 7, true},
		{"70e-1", 7, true},
		{"0.7e1", 7, true},
		{"8", 7, false},
		{"-7", 7, false},
		{"7.5", 7, false},
		{`"7"`, 7, false},
		{"null", 7, false},
		{"", 7, false},
		{"18446744073709551615", 18446744073709551615, true},
		{"18446744073709551615.0", 18446744073709551615, false}, // beyond float64 precision: refuse
	}
	for _, tt := range tests {
		if got := idMatches([]byte(tt.raw), tt.id); got != tt.want {
			t.Errorf("idMatches(%s, %d) = %v, want %v", tt.raw, tt.id, got, tt.want)
		}
	}
}

func TestReadLine(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		max      int
		want     []string // lines before the error
		tooLarge bool
	}{
		{"short lines", "a\nbb\n", 10, []string{"a", "bb"}, false},
		{"at limit", "0123456789\n", 10, []string{"0123456789"}, false},
		{"over limit in buffer", "0123456789a\n", 10, nil, true},
		{"long line within limit", strings.Repeat("x", 100) + "\nok\n", 200, []string{strings.Repeat("x", 100), "ok"}, false},
		{"long line at limit", strings.Repeat("x", 100) + "\n", 100, []string{strings.Repeat("x", 100)}, false},
		{"long line over limit", strings.Repeat("x", 101) + "\n", 100, nil, true},
		{"long line over limit, no newline", strings.Repeat("x", 500), 100, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
			var long []byte
			var got []string
			var err error
			for {
				var line []byte
				line, _, err = readLine(br, tt.max, &long)
				if err != nil {
					break
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
			var tl *TooLargeError
			if errors.As(err, &tl) != tt.tooLarge {
				t.Fatalf("err = %v, want too large: %v", err, tt.tooLarge)
			}
			if tt.tooLarge && (tl.Limit != tt.max || tl.Size <= tt.max) {
				t.Errorf("TooLargeError = %+v", tl)
			}
		})
	}
}

// FuzzReadReply feeds arbitrary bytes to the reply reader as if the server
// had sent them in answer to request 1: it returns a valid UTF-8 JSON
// result, an error object, or an error, never two of them.
func FuzzReadReply(f *testing.F) {
	seeds, err := os.ReadFile("testdata/replies.txt")
	if err != nil {
		f.Fatal(err)
	}
	for line := range bytes.Lines(seeds) {
		f.Add(line)
		f.Add(append([]byte("\n \r\n"), line...))
		f.Add(append([]byte("null\n"), line...))
	}
	f.Add(seeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var long []byte
		var r wireReply
		res, n, err := readReply(br, 256, &long, &r, 1)
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		var rpcErr *Error
		switch {
		case err == nil:
			if res == nil || !json.Valid(res) {
				t.Fatalf("success with result %q", res)
			}
		case errors.As(err, &rpcErr):
			if res != nil {
				t.Fatalf("both result %q and error %v", res, err)
			}
			if !json.Valid(rpcErr.Raw) || rpcErr.Raw[0] != '{' {
				t.Fatalf("error object %q is not an object", rpcErr.Raw)
			}
			if rpcErr.Data != nil && !json.Valid(rpcErr.Data) {
				t.Fatalf("error data %q is not JSON", rpcErr.Data)
			}
		default:
			if res != nil {
				t.Fatalf("result %q with error %v", res, err)
			}
		}
	})
}

// BenchmarkParseReply measures the reply check on its own.
func BenchmarkParseReply(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"contacts":[{"name":"Ada Lovelace","email":"ada@example.com"}],"total":1}}`)
	var r wireReply
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseReply(line, &r, 12345); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendRequest measures building a request line.
func BenchmarkAppendRequest(b *testing.B) {
	var w bytes.Buffer
	p := json.RawMessage(`{"query":"Ada","limit":10}`)
	b.ReportAllocs()
	for b.Loop() {
		appendRequest(&w, 12345, "contacts.search", p)
	}
}

func BenchmarkParseReplyLarge(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"data":"` + string(bytes.Repeat([]byte("x"), 1<<20)) + `","items":[1,2,3]}}`)
	var r wireReply
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := parseReply(line, &r, 1); err != nil {
			b.Fatal(err)
		}
	}
}
