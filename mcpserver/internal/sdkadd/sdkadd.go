// Package sdkadd registers a tool, resource or template with a go-sdk
// server, which panics on a definition it cannot take (a schema whose type
// is not "object", a URI it cannot parse): the panic becomes an error, so
// that one bad definition of a manifest is skipped and logged, not the
// end of the process.
package sdkadd

import "fmt"

// Add runs add, the go-sdk's registration of one definition, and returns
// its panic as an error.
func Add(add func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the go-sdk refused it: %v", p)
		}
	}()
	add()
	return nil
}
