package clientconfig

// Backups of client files, made before each change.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// BackupSuffix names the backups of a client file: FILE.tairseach-backup
// the first, FILE.tairseach-backup.2, .3… the next ones.
const BackupSuffix = ".tairseach-backup"

// Backup copies data, the file at path before a change, to its next backup,
// and returns its name. A backup is never replaced: each change has its
// own, so that any earlier state of the file can be had again. Backups are
// 0600: client files hold tokens.
func Backup(path string, data []byte) (string, error) {
	n, err := lastBackup(path)
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", path, err)
	}
	var f *os.File
	var name string
	for range 100 { // another install may be making the same one
		n++
		name = BackupName(path, n)
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
	return name, nil
}

// BackupName is the name of path's backup number n, from 1.
func BackupName(path string, n int) string {
	if n == 1 {
		return path + BackupSuffix
	}
	return path + BackupSuffix + "." + strconv.Itoa(n)
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
		rest, ok := strings.CutPrefix(e.Name(), filepath.Base(path)+BackupSuffix)
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
