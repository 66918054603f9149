package main

// Writing a client file: in one rename, after a backup of the file as it
// was.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// backupSuffix names the backups of a client file: FILE.tairseach-backup
// the first, FILE.tairseach-backup.2, .3… the next ones.
const backupSuffix = ".tairseach-backup"

// write backs the old file up, then replaces it in one rename, with the old file's permissions (0600 for a new one, in a 0700
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

// writeBackup copies data, the file at path before this change, to its next
// backup, and says where. A backup is never replaced: each change has its
// own, so that any earlier state of the file can be had again. Backups are
// 0600: client files hold tokens.
func writeBackup(path string, data []byte) (string, error) {
	n, err := lastBackup(path)
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", path, err)
	}
	var f *os.File
	var name string
	for range 100 { // another install may be making the same one
		n++
		name = backupName(path, n)
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("backing up %s to %s: %w", path, name, err)
	}
	return " (the old file is in " + name + ")", nil
}

// backupName is the name of path's backup number n, from 1.
func backupName(path string, n int) string {
	if n == 1 {
		return path + backupSuffix
	}
	return path + backupSuffix + "." + strconv.Itoa(n)
}

// lastBackup is the highest number of path's backups, 0 when it has none:
// the next one follows it, even when earlier ones were removed.
func lastBackup(path string) (int, error) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return 0, err
	}
	last := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), filepath.Base(path)+backupSuffix)
		switch n, err := strconv.Atoi(strings.TrimPrefix(rest, ".")); {
		case !ok:
		case rest == "":
			last = max(last, 1)
		case rest[0] == '.' && err == nil && n > 0:
			last = max(last, n)
		}
	}
	return last, nil
}
