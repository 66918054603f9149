// Package exact tells which JSON values the go-sdk writes back byte for
// byte. The go-sdk decodes a request id into a float64 kept as an int64,
// and a progress token (a member of _meta, a map[string]any) into a
// float64 or a Go string, then writes them again with encoding/json: a
// client's 9007199254740993 comes back as 9007199254740992, 1e3 as 1000,
// 1.50 as 1.5, "\u0041" as "A". The transports hand the go-sdk a value of
// their own for each that would change, and put the client's back on the
// way out.
package exact

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
)

// Token reports whether the go-sdk writes the progress token raw back as it
// came. Values that are neither numbers nor strings are not valid tokens;
// they are reported kept, for the go-sdk to judge.
func Token(raw []byte) bool {
	if len(raw) == 0 {
		return true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return true
	}
	switch v.(type) {
	case float64, string:
	default:
		return true
	}
	b, err := jsonenc.Marshal(v)
	return err == nil && bytes.Equal(b, raw)
}

// ID reports whether the go-sdk writes the request id raw back as it came:
// a string it writes as Token does, a number only if it is an integer
// written plainly, of at most 2^53 in size. Values that are neither (an
// object, null) are not valid ids: they are reported kept, for the go-sdk
// to refuse.
func ID(raw []byte) bool {
	if len(raw) == 0 || raw[0] == '"' {
		return Token(raw)
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n <= 1<<53 && n >= -(1<<53) && strconv.FormatInt(n, 10) == string(raw)
}
