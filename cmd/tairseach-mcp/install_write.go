package main

// Writing a client file: in one rename, after a backup of the file as it
// was (clientconfig.Backup).

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// write backs the old file up, then replaces it in one rename, with the
// old file's permissions (0600 for a new one, in a 0700 directory). It
// returns a note on the backup for the user.
func (cf *configFile) write() (note string, err error) {
	dir := filepath.Dir(cf.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	if cf.data != nil {
		name, err := clientconfig.Backup(cf.path, cf.data)
		if err != nil {
			return "", err
		}
		note = " (the old file is in " + name + ")"
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(cf.path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", cf.shown, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	_, err = tmp.Write(cf.doc.Bytes())
	if err == nil {
		err = tmp.Chmod(cf.mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), cf.path)
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", cf.shown, err)
	}
	return note, nil
}
