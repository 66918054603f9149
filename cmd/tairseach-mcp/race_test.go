//go:build race

package main

// raceEnabled: the tests run under the race detector (go test -race), and
// TestMain builds the binaries they start with it too.
const raceEnabled = true
