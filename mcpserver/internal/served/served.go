// Package served decides which tool a feature's request is served by: a
// resource or template a manifest declares, the permissions and status
// resources, a completion. A feature's thing is as visible as the tools
// that serve it, so the lists (resources/list) and the pipeline that reads
// (mcpserver/pipeline) must take the same tools: both ask By.
package served

import "github.com/geilt/tairseach-mcp/manifest"

// By reports whether a request of method, of the manifest file (a
// declaration's File, a backend.Request's Manifest; "" for any manifest),
// is served by t when t is served: t calls method and is of that manifest.
func By(t manifest.Tool, method, file string) bool {
	return t.Method == method && (file == "" || t.File == file)
}

// Any reports whether a tool of tools, all served, serves a request of
// method of the manifest file.
func Any(tools []manifest.Tool, method, file string) bool {
	for _, t := range tools {
		if By(t, method, file) {
			return true
		}
	}
	return false
}
