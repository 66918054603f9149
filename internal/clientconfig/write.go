package clientconfig

// Writing a client file: through the user's links, in one rename, after a
// backup.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxLinks bounds a chain of symbolic links, as the kernel's ELOOP does.
const maxLinks = 40

// Target is the file that a write to path changes: path itself, or the end
// of the chain of symbolic links that starts at path. The end need not
// exist: a dotfile is often linked before it is made.
func Target(path string) (string, error) {
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		to, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			// Relative to the directory the link is really in: its ".."
			// is the kernel's, not filepath.Join's.
			dir, err := filepath.EvalSymlinks(filepath.Dir(p))
			if err != nil {
				return "", err
			}
			to = filepath.Join(dir, to)
		}
		p = to
	}
	return "", fmt.Errorf("more than %d symbolic links in a row; is there a loop?", maxLinks)
}

// Write makes the file at path hold data, with mode mode, after a backup of
// old, the file as it was read (no backup when old is nil: there was no
// file), and returns the backup's name.
//
// When path is a symbolic link, or a chain of them, the file at its end is
// written and every link stays as it is, dangling or not: dotfiles keep
// their links, and their repository gets the change. A dangling link's
// target is created, in a directory that must exist. The file is replaced
// in one rename; a file with other hard links is rewritten in place
// instead, so that each of its names sees the change. When path is not a
// link, its missing directories are made, 0700.
//
// Nothing is lost on the way. The new file is written before the backup is
// made, so a write that cannot be made leaves the file and the backups as
// they were. A file that is no longer old (another program wrote it since
// it was read) is not written: ErrChanged. A file owned by another user is
// not taken over. Only after the change are the oldest backups let go.
//
// The backup is beside path, the name the user knows, never in the
// directory a link points into: a dotfiles repository would commit it.
func Write(path string, data, old []byte, mode fs.FileMode) (backup string, err error) {
	target, err := Target(path)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := makeDir(path, target); err != nil {
		return "", err
	}
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil
	case err != nil:
		return "", writeError(path, target, err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("writing %s: %s is not a regular file", path, target)
	case !ownFile(fi):
		return "", fmt.Errorf("writing %s: %s belongs to another user (uid %d); run this as that user, not with sudo; nothing was written", path, target, owner(fi))
	}
	inPlace := fi != nil && links(fi) > 1
	var tmp *os.File
	if !inPlace {
		if tmp, err = prepare(target, data, mode); err != nil {
			return "", writeError(path, target, err)
		}
		defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	}
	if old != nil {
		if backup, err = Backup(path, old); err != nil {
			return "", err
		}
	}
	// Last, so that the window another program's write can fall in is
	// the rename's.
	if err := unchanged(path, target, old); err != nil {
		if backup != "" {
			os.Remove(backup)
		}
		return "", err
	}
	if inPlace {
		err = rewrite(target, data, mode)
		if err != nil && backup != "" && rewrite(target, old, fi.Mode().Perm()) != nil {
			return "", fmt.Errorf("%w; %s may be left half written: the old file is in %s (cp %s %s)", writeError(path, target, err), target, backup, backup, target)
		}
	} else {
		err = os.Rename(tmp.Name(), target)
	}
	if err != nil {
		if backup != "" {
			os.Remove(backup) // the file is as it was: the backups too
		}
		return "", writeError(path, target, err)
	}
	Prune(path)
	if target != path {
		Prune(target) // made there by earlier versions
	}
	return backup, nil
}

// ErrChanged is a file another program wrote between its read and its
// write: it was left as that program wrote it.
var ErrChanged = errors.New("changed while this ran")

// unchanged reports ErrChanged when the file at target is no longer old
// (nil: no file).
func unchanged(path, target string, old []byte) error {
	now, err := os.ReadFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist) && old == nil:
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return writeError(path, target, err)
	case old == nil || err != nil || !bytes.Equal(now, old):
		return fmt.Errorf("writing %s: %w (another program wrote it); nothing was written: run this again", path, ErrChanged)
	}
	return nil
}

// prepare writes data, with mode mode, to a new file beside path, ready to
// be renamed over it: a reader sees the old file or the new, never half of
// one.
func prepare(path string, data []byte, mode fs.FileMode) (*os.File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	return tmp, nil
}

// makeDir makes sure target's directory is there: made when path is not a
// link, else an error that says what to make.
func makeDir(path, target string) error {
	dir := filepath.Dir(target)
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("writing %s: %s is not a directory", path, dir)
	case !errors.Is(err, fs.ErrNotExist):
		return writeError(path, target, err)
	case target != path:
		return fmt.Errorf("%s is a link to %s, whose directory %s does not exist; make it (mkdir -p %s) or point the link elsewhere, and run this again", path, target, dir, dir)
	}
	// A directory on the way that is a dangling link (~/.codex pointing into
	// dotfiles not made yet) is the user's to make, not ours to replace.
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				break // a live link to a directory (~/.config in dotfiles): make what is missing below it
			}
			to, _ := os.Readlink(d)
			return fmt.Errorf("writing %s: %s is a link to %s, which does not exist; make it or remove the link, and run this again", path, d, to)
		}
		break
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	return nil
}

// writeError says which file could not be written, and through which link.
func writeError(path, target string, err error) error {
	if target == path {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	hint := ""
	if errors.Is(err, fs.ErrPermission) {
		hint = "; make its directory writable, or point the link at a file you can write"
	}
	return fmt.Errorf("writing %s, the target of the link %s: %w%s", target, path, err, hint)
}

// links is the number of names (hard links) of the file.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// owner is the uid of the file's owner.
func owner(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return uint32(os.Geteuid())
}

// ownFile reports whether the file is this process's user's: a file
// replaced by a rename, and its backup, would be this user's after.
func ownFile(fi fs.FileInfo) bool { return owner(fi) == uint32(os.Geteuid()) }

// rewrite writes data over the file at path, keeping the file and so its
// other names. It is not atomic; the backup made first is the way back.
func rewrite(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
