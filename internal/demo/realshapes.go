package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
)

// Methods whose replies have the shapes the real Tairseach server's handlers
// give them, which the outputSchemas of its own manifests do not describe
// (see docs/manifests.md, "What a call returns"): a bridge must pass them on as
// the successes they are.

type eventParams struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type event struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Start string `json:"start"`
	End   string `json:"end"`
}

// calendarUpdateEvent answers like the real calendar.updateEvent:
// {"updated": true, "event": {…}}, with no top-level id or message.
func calendarUpdateEvent(_ context.Context, params []byte) ([]byte, *rpcError) {
	var p eventParams
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.ID == "" {
		return nil, invalidParams("missing required param: id")
	}
	if p.Title == "" {
		p.Title = "Standup"
	}
	return marshalResult(struct {
		Updated bool  `json:"updated"`
		Event   event `json:"event"`
	}{true, event{ID: p.ID, Title: p.Title, Start: "2026-02-16T09:00:00Z", End: "2026-02-16T09:15:00Z"}})
}

// calendarDeleteEvent answers like the real calendar.deleteEvent:
// {"deleted": true, "id": "…"}, with no message.
func calendarDeleteEvent(_ context.Context, params []byte) ([]byte, *rpcError) {
	var p eventParams
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.ID == "" {
		return nil, invalidParams("missing required param: id")
	}
	return marshalResult(struct {
		Deleted bool   `json:"deleted"`
		ID      string `json:"id"`
	}{true, p.ID})
}

// opVaultsList answers like the real op.vaults.list: a JSON array.
func opVaultsList(context.Context, []byte) ([]byte, *rpcError) {
	return []byte(`[{"id":"v-private","name":"Private"},{"id":"v-shared","name":"Shared"}]`), nil
}

type hugeParams struct {
	Kind  string `json:"kind"`  // text (default), object or error
	Bytes int    `json:"bytes"` // about this many bytes of payload
	Char  string `json:"char"`  // the text's character; default "x"
}

// demoHuge builds large replies of a given shape: {"data": "ccc…"} (text),
// an object of many members (object), or an error object whose data is
// a long string (error).
func demoHuge(_ context.Context, params []byte) ([]byte, *rpcError) {
	p := hugeParams{Kind: "text", Bytes: defaultBlobBytes, Char: "x"}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Bytes < 0 || p.Bytes > maxBlobBytes {
		return nil, invalidParams("bytes must be between 0 and 104857600")
	}
	if p.Char == "" {
		p.Char = "x"
	}
	text := strings.Repeat(p.Char, p.Bytes/len(p.Char))
	switch p.Kind {
	case "text":
		return marshalResult(map[string]string{"data": text})
	case "object":
		b := make([]byte, 0, p.Bytes+64)
		b = append(b, '{')
		for i := 0; len(b) < p.Bytes; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `"key-%07d":"value of the member, some words long"`, i)
		}
		return append(b, '}'), nil
	case "error":
		data, _ := jsonenc.Marshal(text)
		return nil, &rpcError{Code: codeHandlerError, Message: "a large error", Data: json.RawMessage(data)}
	}
	return nil, invalidParams(`kind must be "text", "object" or "error"`)
}
