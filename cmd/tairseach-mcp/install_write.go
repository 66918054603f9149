package main

// Writing a client file: in one rename, after a backup of the file as it
// was.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// backupSuffix names the one backup of a client file: written before the
// first change, never replaced.
const backupSuffix = ".tairseach-backup"

// write backs the old file up if it never was, then replaces it in one
// rename, with the old file's permissions (0600 for a new one, in a 0700
// directory). It returns a note on the backup for the user.
func (cf *configFile) write() (note string, err error) {
	dir := filepath.Dir(cf.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	if cf.data != nil {
		if note, err = writeBackup(cf.path, cf.data); err != nil {
			return "", err
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(cf.path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", cf.shown, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	_, err = tmp.Write(cf.doc.bytes())
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

// writeBackup copies data to path.tairseach-backup unless that exists: the
// one backup holds the file as it was before the first change, and is
// never replaced. Backups are 0600: client files hold tokens.
func writeBackup(path string, data []byte) (string, error) {
	name := path + backupSuffix
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return " (" + name + " keeps the file from before the first change)", nil
	}
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("backing up %s to %s: %w", path, name, err)
	}
	return " (the old file is in " + name + ")", nil
}
