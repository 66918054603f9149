package clientconfig

// Backups of client files, made before each change; the last few kept.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// BackupSuffix names the backups of a client file: FILE.tairseach-backup
// the first, FILE.tairseach-backup.2, .3… the next ones.
const BackupSuffix = ".tairseach-backup"

// KeepBackups is how many backups of a file are kept: the newest ones.
// Each is a whole copy of the file, tokens and API keys included, so they
// must not pile up.
const KeepBackups = 3

// Backup copies data, the file at path before a change, to its next backup,
// and returns its name. A backup is never replaced: each change has its
// own, numbered one more than the highest there. Backups are 0600,
// whatever the file's mode: client files hold tokens. Once the change is
// made, Prune lets the oldest go.
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

// backups are the numbers of path's backups: regular files named exactly
// as BackupName names them, and nothing else.
func backups(path string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	var out []int
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+BackupSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if rest == "" {
			out = append(out, 1)
		} else if n, err := strconv.Atoi(rest[1:]); err == nil && n > 1 && e.Name() == filepath.Base(BackupName(path, n)) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// lastBackup is the highest number of path's backups, 0 when it has none:
// the next one follows it, even when earlier ones were removed.
func lastBackup(path string) (int, error) {
	ns, err := backups(path)
	if err != nil || len(ns) == 0 {
		return 0, err
	}
	return ns[len(ns)-1], nil
}

// Prune removes path's oldest backups, all but the KeepBackups
// newest. A backup it cannot remove stays; the change it backs up is
// made all the same.
func Prune(path string) {
	ns, _ := backups(path)
	for _, n := range ns[:max(len(ns)-KeepBackups, 0)] {
		os.Remove(BackupName(path, n))
	}
}
