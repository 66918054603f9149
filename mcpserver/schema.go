package mcpserver

import (
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// lazySchema is a tool's schema, compiled on the tool's first call:
// compiling every schema of a large registry up front would hold up the
// server's first answer. Tools with the same schema share one lazySchema,
// and reloads keep those whose JSON did not change.
type lazySchema struct {
	raw json.RawMessage

	once   sync.Once
	input  *jsonschema.Resolved // as an inputSchema
	output *outputCheck         // as an outputSchema
	err    error

	quickOnce sync.Once
	quick     *quickCheck // as an inputSchema, if the schema allows
}

// quickCheck returns the quick check of arguments, or nil if the schema
// needs jsonschema-go.
func (l *lazySchema) quickCheck() *quickCheck {
	l.quickOnce.Do(func() { l.quick = newQuickCheck(l.raw) })
	return l.quick
}

// inputCheck returns the compiled schema, for checking arguments.
func (l *lazySchema) inputCheck() (*jsonschema.Resolved, error) {
	l.once.Do(func() { l.input, l.err = compileSchema(l.raw) })
	return l.input, l.err
}

// compiles reports why the schema does not compile, if it does not,
// compiling it only if the quick check cannot vouch for it: every schema the
// quick check compiles, jsonschema-go compiles (FuzzQuickCheckCompiles).
func (l *lazySchema) compiles() error {
	if l.quickCheck() != nil {
		return nil
	}
	_, err := l.outputCheck()
	return err
}

// outputCheck returns the prepared check of results.
func (l *lazySchema) outputCheck() (*outputCheck, error) {
	l.once.Do(func() { l.output, l.err = newOutputCheck(l.raw, compileSchema) })
	return l.output, l.err
}

func compileSchema(b json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}
