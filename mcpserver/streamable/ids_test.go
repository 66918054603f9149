package streamable

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestSwapWriterPutsBackMembersOnly: the client's id and token replace ours
// only as the id of a message, the progressToken of a notifications/progress
// and the requestId of a notifications/cancelled; the same text anywhere
// else (a result, a message, another notification) is written as it is.
func TestSwapWriterPutsBackMembersOnly(t *testing.T) {
	swaps := []swap{
		{ours: []byte(`"\u0000id:1"`), client: []byte(`9007199254740993`), key: "s\x00n9007199254740993"},
		{ours: []byte(`"\u0000progress:2"`), client: []byte(`1.50`)},
	}
	for _, tt := range []struct {
		name, contentType, in, want string
	}{
		{"response", "application/json",
			`{"jsonrpc":"2.0","id":"\u0000id:1","result":{"structuredContent":{"a":"\u0000id:1","b":"\"\u0000id:1","c":"\u0000progress:2"}}}`,
			`{"jsonrpc":"2.0","id":9007199254740993,"result":{"structuredContent":{"a":"\u0000id:1","b":"\"\u0000id:1","c":"\u0000progress:2"}}}`},
		{"a token is not an id", "application/json",
			`{"jsonrpc":"2.0","id":"\u0000progress:2","result":{}}` + "\n",
			`{"jsonrpc":"2.0","id":"\u0000progress:2","result":{}}` + "\n"},
		{"batch", "application/json",
			`[{"jsonrpc":"2.0","id":"\u0000id:1","result":{}},{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"\"\u0000id:1"}}]`,
			`[{"jsonrpc":"2.0","id":9007199254740993,"result":{}},{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"\"\u0000id:1"}}]`},
		{"progress event", "text/event-stream",
			"event: message\nid: x_1\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"\u0000progress:2","message":"\u0000progress:2","progress":1}}` + "\n\n",
			"event: message\nid: x_1\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1.50,"message":"\u0000progress:2","progress":1}}` + "\n\n"},
		{"cancellation event", "text/event-stream",
			"data: " + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0000id:1","reason":"\u0000id:1"}}` + "\n\n",
			"data: " + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993,"reason":"\u0000id:1"}}` + "\n\n"},
		{"other notification", "text/event-stream",
			"data: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":"\u0000progress:2","data":"\u0000id:1"}}` + "\n\n",
			"data: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":"\u0000progress:2","data":"\u0000id:1"}}` + "\n\n"},
		{"not JSON", "text/plain; charset=utf-8", `"\u0000id:1"` + "\n", `"\u0000id:1"` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", tt.contentType)
			w := newSwapWriter(rec, swaps)
			// A buffer with room after the message, as the go-sdk's are.
			buf := append(make([]byte, 0, len(tt.in)+64), tt.in...)
			if n, err := w.Write(buf); n != len(tt.in) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			if got := rec.Body.String(); got != tt.want {
				t.Errorf("wrote\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// FuzzSwapWriterKeepsContent: whatever a result holds, the message written
// is JSON, its id is the client's, and the result is as it was.
func FuzzSwapWriterKeepsContent(f *testing.F) {
	for _, s := range []string{"\x00id:1", "\"\x00id:1", "\x00id:1\"", `"\u0000id:1"`, "\x00progress:2"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	swaps := []swap{
		{ours: []byte(`"\u0000id:1"`), client: []byte(`9007199254740993`), key: "s\x00n9007199254740993"},
		{ours: []byte(`"\u0000progress:2"`), client: []byte(`1.50`)},
	}
	f.Fuzz(func(t *testing.T, s string, stream bool) {
		msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "\x00id:1", "result": map[string]any{s: s, "a": []string{s}}})
		if err != nil {
			t.Skip()
		}
		rec := httptest.NewRecorder()
		body := msg
		if stream {
			rec.Header().Set("Content-Type", "text/event-stream")
			body = append(append([]byte("event: message\ndata: "), msg...), "\n\n"...)
		}
		if _, err := newSwapWriter(rec, swaps).Write(body); err != nil {
			t.Fatal(err)
		}
		out := rec.Body.Bytes()
		if stream {
			out = bytes.TrimSuffix(bytes.TrimPrefix(out, []byte("event: message\ndata: ")), []byte("\n\n"))
		}
		var got, want struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if err := json.Unmarshal(out, &got); err != nil || string(got.ID) != "9007199254740993" {
			t.Fatalf("%q: wrote %s (%v)", s, out, err)
		}
		_ = json.Unmarshal(msg, &want)
		if !bytes.Equal(got.Result, want.Result) {
			t.Fatalf("%q: the result is %s, was %s", s, got.Result, want.Result)
		}
	})
}
