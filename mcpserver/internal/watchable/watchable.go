// Package watchable says whether a directory can be watched with fsnotify
// at a bounded cost. On macOS and the BSDs fsnotify uses kqueue, which
// holds an open descriptor for every file of a watched directory: a
// directory of tens of thousands of files would take as many descriptors
// from the bridge, which needs them for its sockets. The features that
// watch a directory (the logs, the prompts) look at one too large instead.
package watchable

import (
	"os"
	"runtime"
	"strings"
)

// MaxKqueueFiles is the most files of a directory watched with kqueue.
const MaxKqueueFiles = 1024

// kqueue reports a system where fsnotify holds a descriptor per file of a
// watched directory.
var kqueue = runtime.GOOS == "darwin" || strings.HasSuffix(runtime.GOOS, "bsd") || runtime.GOOS == "dragonfly"

// TooLarge reports whether watching dir would hold more than
// MaxKqueueFiles descriptors: on a kqueue system, a directory of more
// entries than that. It reads no more of dir than that.
func TooLarge(dir string) bool {
	if !kqueue {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(MaxKqueueFiles + 1)
	return len(names) > MaxKqueueFiles
}
