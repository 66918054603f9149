package stdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// jsonSyntaxError describes why line is not JSON.
func jsonSyntaxError(line []byte) string {
	var v any
	err := json.Unmarshal(line, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

// validRawID returns raw if it is a usable JSON-RPC id (a number or string).
func validRawID(raw json.RawMessage) json.RawMessage {
	if _, ok := requestKey(raw); ok {
		return raw
	}
	return nil
}

// requestKey returns the key of a request id, telling apart "1" and 1 and
// matching the same string however it is escaped, and whether the id is one
// a request may have: a string or a number. Numbers keep their bytes: 1 and
// 1.0 are different ids, as the client will see them echoed.
func requestKey(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "n" + string(raw), true
	}
	return "", false
}

// idKind names the JSON type of an id for an error message.
func idKind(raw json.RawMessage) string {
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "that"
}

// classify reports whether a request follows 2026-07-28 by its decoded
// _meta (nil when absent or not an object) (a
// protocolVersion of 2026-07-28 or later, as the go-sdk decides), and
// whether its _meta is, by the spec, certainly valid: protocolVersion
// 2026-07-28, clientCapabilities an object, clientInfo absent or an
// Implementation. Anything else is left to the go-sdk to judge.
func classify(meta map[string]json.RawMessage) (newProto, valid bool) {
	if meta == nil {
		return false, false
	}
	var version string
	if json.Unmarshal(meta[protocolVersionKey], &version) != nil || version < NewProtocol {
		return false, false
	}
	if version != NewProtocol {
		return true, false
	}
	caps := meta["io.modelcontextprotocol/clientCapabilities"]
	var cv struct {
		mcp.ClientCapabilities
		// Deprecated by 2026-07-28 but still sent by its clients: it must
		// decode as the go-sdk decodes it.
		//lint:ignore SA1019 see above
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if len(caps) == 0 || caps[0] != '{' || json.Unmarshal(caps, &cv) != nil {
		return true, false
	}
	if info, ok := meta["io.modelcontextprotocol/clientInfo"]; ok {
		var impl mcp.Implementation
		if len(info) == 0 || info[0] != '{' || json.Unmarshal(info, &impl) != nil {
			return true, false
		}
	}
	return true, true
}

// hasMeta reports whether params has a _meta (a notification on a
// 2026-07-28 subscription).
func hasMeta(params json.RawMessage) bool {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	return json.Unmarshal(params, &p) == nil && len(p.Meta) > 0
}

// maxMemoMeta bounds the _meta kept: a larger one is classified every time.
const maxMemoMeta = 4 << 10

// revision classifies a request by its _meta, as classify does, remembering
// the last _meta.
func (m *metaMemo) revision(meta json.RawMessage) (newProto, valid bool) {
	if len(meta) > 0 && bytes.Equal(meta, m.raw) {
		return m.newProto, m.valid
	}
	newProto, valid = classify(decodeMeta(meta))
	if len(meta) > 0 && len(meta) <= maxMemoMeta {
		m.raw = append(m.raw[:0], meta...)
		m.newProto, m.valid = newProto, valid
	}
	return newProto, valid
}

// decodeMeta decodes params._meta, or returns nil when it is absent or not
// an object.
func decodeMeta(m json.RawMessage) map[string]json.RawMessage {
	if len(m) == 0 || m[0] != '{' {
		return nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(m, &meta) != nil {
		return nil
	}
	return meta
}

// privateToken begins the progress token the transport gives the go-sdk
// in place of a client's it would not write back as it came; the go-sdk's
// number for the request follows. As the go-sdk writes it: a NUL cannot be
// in a token a client wrote without escaping it.
const privateToken = `"\u0000progress:`
