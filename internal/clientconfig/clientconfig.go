// Package clientconfig edits one server entry in an MCP client's
// configuration file, a JSONC or a TOML file as its owner wrote it: it sets
// the members of the entry that its caller owns and keeps every other one,
// or takes the entry out, and leaves every other byte of the file as it
// was. It also writes the file (Write: through the user's symlinks, which
// stay links) after a backup, and keeps the last few backups.
//
// The caller (the install command) says which members it owns and in which
// words, client by client; this package knows the formats, not the
// clients.
package clientconfig

import (
	"encoding/json"
	"fmt"
	"maps"
)

// File is a client file parsed for editing one server entry.
type File interface {
	// Has reports whether the file has the entry.
	Has() (bool, error)
	// Set makes the entry have fields, adding it when missing: only those
	// members of the entry change, and nothing else in the file.
	Set(fields []Field) error
	// Remove takes the entry out.
	Remove() error
	// Bytes is the file as edited.
	Bytes() []byte
}

// Field is a member of the entry that the caller owns. With a Value (a
// string, a []string, a json.RawMessage) the entry has it so; with Sub it is an object of
// which the caller owns those members only (headers, of which install owns
// Authorization), and which goes when that leaves it empty; with neither,
// the entry does not have it. Every other member is the user's, and stays.
type Field struct {
	Key   string
	Value any
	Sub   []Field
}

// Absent reports whether the entry must not have f.
func (f Field) Absent() bool { return f.Value == nil && f.Sub == nil }

// present are the members of fs that the entry has, as a new entry has
// them: without absent ones, nor objects of absent members only.
func present(fs []Field) []Field {
	var out []Field
	for _, f := range fs {
		if f.Value != nil || len(present(f.Sub)) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// Merge is the entry have, decoded (nil for none), with fields set: the
// entry as it decodes after Set. The members not in fields are have's.
func Merge(have map[string]any, fields []Field) map[string]any {
	out := maps.Clone(have)
	if out == nil {
		out = map[string]any{}
	}
	for _, f := range fields {
		switch v := f.Value.(type) {
		case string:
			out[f.Key] = v
		case json.RawMessage:
			var x any
			_ = json.Unmarshal(v, &x)
			out[f.Key] = x
		case []string:
			a := make([]any, len(v))
			for i, s := range v {
				a[i] = s
			}
			out[f.Key] = a
		default:
			if f.Sub == nil {
				delete(out, f.Key)
				break
			}
			sub, _ := out[f.Key].(map[string]any)
			if sub = Merge(sub, f.Sub); len(sub) > 0 {
				out[f.Key] = sub
			} else {
				delete(out, f.Key)
			}
		}
	}
	return out
}

// Patch is a JSON merge patch (RFC 7396) that sets fields in the entry at
// path (the keys from the top of the file down to the entry's name): it
// holds the caller's members only, an absent one as null, so that a
// program that applies it to the file (openclaw config patch) keeps every
// member of the user's. It differs from Merge in one case only: an object
// of Sub members that the patch leaves empty stays, as {}.
func Patch(path []string, fields []Field) json.RawMessage {
	v := patchObject(fields)
	for i := len(path) - 1; i >= 0; i-- {
		v = encodeObject([]member{{path[i], v}})
	}
	return v
}

func patchObject(fields []Field) json.RawMessage {
	ms := make([]member, 0, len(fields))
	for _, f := range fields {
		v := json.RawMessage("null")
		switch {
		case f.Sub != nil:
			v = patchObject(f.Sub)
		case f.Value != nil:
			v = jsonValue(f)
		}
		ms = append(ms, member{f.Key, v})
	}
	return encodeObject(ms)
}

// SyntaxError is a file that cannot be parsed: where, and why.
type SyntaxError struct {
	Line, Col int
	Cause     string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Cause) }
