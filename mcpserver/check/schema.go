// Package check holds what the call pipeline checks and encodes without
// knowing where a call came from: arguments against a tool's inputSchema
// (with duplicate members refused and the arguments clients add on their
// own dropped), results against its outputSchema, and the encoding and
// size of a CallToolResult as the go-sdk writes it.
package check

import (
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schemas are compiled on a tool's first call: compiling every schema of a
// large registry up front would hold up the server's first answer. Tools
// with the same schema share one value, and reloads keep those whose JSON
// did not change. A schema used both as an inputSchema and as an
// outputSchema gets one value of each type.

// Input is a tool's inputSchema, checking arguments.
type Input struct {
	raw json.RawMessage

	once     sync.Once
	resolved *jsonschema.Resolved
	err      error

	quickOnce sync.Once
	quick     *quickCheck // nil if the schema needs jsonschema-go

	propsOnce sync.Once
	props     map[string]json.RawMessage // the top-level properties
}

// Declares reports whether the schema names the top-level property name.
func (l *Input) Declares(name string) bool {
	l.propsOnce.Do(func() {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(l.raw, &s)
		l.props = s.Properties
	})
	_, ok := l.props[name]
	return ok
}

// quickCheck returns the quick check of arguments, or nil if the schema
// needs jsonschema-go.
func (l *Input) quickCheck() *quickCheck {
	l.quickOnce.Do(func() { l.quick = newQuickCheck(l.raw) })
	return l.quick
}

// inputCheck returns the compiled schema, for checking arguments.
func (l *Input) inputCheck() (*jsonschema.Resolved, error) {
	l.once.Do(func() { l.resolved, l.err = compileSchema(l.raw) })
	return l.resolved, l.err
}

// Output is a tool's outputSchema, checking results.
type Output struct {
	raw json.RawMessage

	once  sync.Once
	check *outputCheck
	err   error
}

// Compiles reports why the schema does not compile, if it does not,
// compiling it only if the quick check cannot vouch for it: every schema the
// quick check compiles, jsonschema-go compiles (FuzzQuickCheckCompiles).
func (l *Output) Compiles() error {
	if newQuickCheck(l.raw) != nil {
		return nil
	}
	_, err := l.outputCheck()
	return err
}

// outputCheck returns the prepared check of results.
func (l *Output) outputCheck() (*outputCheck, error) {
	l.once.Do(func() { l.check, l.err = newOutputCheck(l.raw, compileSchema) })
	return l.check, l.err
}

func compileSchema(b json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// NewInput returns the check of arguments against schema, compiled on
// first use.
func NewInput(schema json.RawMessage) *Input { return &Input{raw: schema} }

// NewOutput returns the check of results against schema, compiled on first
// use.
func NewOutput(schema json.RawMessage) *Output { return &Output{raw: schema} }

// Check checks args (a JSON value) against the schema and returns "" when
// they match, else what is wrong, naming the argument. A schema that does
// not compile leaves the arguments unchecked and returns why (validate
// reports it to the operator).
func (l *Input) Check(args json.RawMessage) (problem string, uncompiled error) {
	if q := l.quickCheck(); q != nil && q.acceptsArgs(args) {
		return "", nil
	}
	v, msg := decodeArgs(args)
	if msg != "" {
		return msg, nil
	}
	in, err := l.inputCheck()
	if err != nil {
		return "", err
	}
	return validateArgs(in, v), nil
}

// Check checks result, valid compact JSON, against the schema and returns
// "" or what is wrong; with redact, what it returns quotes no value of the
// result. err says why the schema does not compile.
func (l *Output) Check(result []byte, redact bool) (problem string, err error) {
	c, err := l.outputCheck()
	if err != nil {
		return "", err
	}
	return c.checkShowing(result, redact), nil
}
