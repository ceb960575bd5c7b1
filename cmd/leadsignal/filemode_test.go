//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMigrateKeepsDataPrivate runs the command on a data folder that does
// not exist yet, under the usual umask: the folder is the owner's alone,
// and so is the database file, which holds personal data.
func TestMigrateKeepsDataPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "data")
	d := db{vars: map[string]string{"LEADSIGNAL_DATA": dir}}
	if r := d.run(t, "", "migrate"); r.err != nil {
		t.Fatalf("migrate: %v\n%s", r.err, r.stderr)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "leadsignal.db"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("stat: %v", err)
			continue
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %#o; want %#o", filepath.Base(path), got, want)
		}
	}
}
