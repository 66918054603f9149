package mcpserver

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

// inputSchema is a tool's inputSchema, checking arguments.
type inputSchema struct {
	raw json.RawMessage

	once     sync.Once
	resolved *jsonschema.Resolved
	err      error

	quickOnce sync.Once
	quick     *quickCheck // nil if the schema needs jsonschema-go

	propsOnce sync.Once
	props     map[string]json.RawMessage // the top-level properties
}

// declares reports whether the schema names the top-level property name.
func (l *inputSchema) declares(name string) bool {
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
func (l *inputSchema) quickCheck() *quickCheck {
	l.quickOnce.Do(func() { l.quick = newQuickCheck(l.raw) })
	return l.quick
}

// inputCheck returns the compiled schema, for checking arguments.
func (l *inputSchema) inputCheck() (*jsonschema.Resolved, error) {
	l.once.Do(func() { l.resolved, l.err = compileSchema(l.raw) })
	return l.resolved, l.err
}

// outputSchema is a tool's outputSchema, checking results.
type outputSchema struct {
	raw json.RawMessage

	once  sync.Once
	check *outputCheck
	err   error
}

// compiles reports why the schema does not compile, if it does not,
// compiling it only if the quick check cannot vouch for it: every schema the
// quick check compiles, jsonschema-go compiles (FuzzQuickCheckCompiles).
func (l *outputSchema) compiles() error {
	if newQuickCheck(l.raw) != nil {
		return nil
	}
	_, err := l.outputCheck()
	return err
}

// outputCheck returns the prepared check of results.
func (l *outputSchema) outputCheck() (*outputCheck, error) {
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
