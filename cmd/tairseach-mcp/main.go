// Command tairseach-mcp is the MCP server of Tairseach: it exposes the
// capabilities described by the manifests in ~/.tairseach/manifests as MCP
// tools and forwards each call to the Tairseach Unix socket.
package main

import "os"

func main() {
	version = versionString()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
