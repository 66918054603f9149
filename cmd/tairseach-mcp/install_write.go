package main

// Writing a client file: through the user's links, in one rename, after a
// backup of the file as it was; the last few backups kept
// (clientconfig.Write).

import (
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// write writes the edited file with cf.mode, through the links it is
// reached by (they stay links), after a backup of the old file. It returns
// a note on the backup for the user. Every client's file is written here.
func (cf *configFile) write() (note string, err error) {
	name, err := clientconfig.Write(cf.path, cf.doc.Bytes(), cf.data, cf.mode)
	if err != nil {
		return "", err
	}
	if name != "" {
		note = " (the old file is in " + name + ")"
	}
	return note, nil
}
