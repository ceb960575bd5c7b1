//go:build unix

package store_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/leadsignal/leadsignal/store"
)

// The SQLite file holds personal data: it, its -wal and -shm files are
// the owner's alone (0600), and so is the data folder (0700), whatever the
// umask says.
func TestSQLiteFileModes(t *testing.T) {
	tests := []struct {
		name string
		// before prepares the data folder and returns the database path.
		before func(t *testing.T, dir string) string
	}{
		{"new folder and file", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "data", "leadsignal.db")
		}},
		{"existing folder and files with looser modes", func(t *testing.T, dir string) string {
			data := filepath.Join(dir, "data")
			path := filepath.Join(data, "leadsignal.db")
			// A database made by an earlier version: a 0755 folder, a 0644
			// file, and empty -wal and -shm files as a crash may leave.
			if err := openAndWrite(t, path).Close(); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{path + "-wal", path + "-shm"} {
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for p, mode := range map[string]os.FileMode{data: 0o755, path: 0o644, path + "-wal": 0o644, path + "-shm": 0o644} {
				if err := os.Chmod(p, mode); err != nil {
					t.Fatal(err)
				}
			}
			return path
		}},
	}
	// The usual umask, which lets others read new files.
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.before(t, t.TempDir())
			s := openAndWrite(t, path)
			// The -wal and -shm files live while the store is open.
			wantMode(t, filepath.Dir(path), 0o700)
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				wantMode(t, p, 0o600)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			wantMode(t, path, 0o600)
		})
	}
}

// openAndWrite opens the store at path, migrates and writes a row, and
// returns it open.
var writes int

func openAndWrite(t *testing.T, path string) *store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), store.Options{SQLitePath: path})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	writes++
	if _, err := s.CreateUser(t.Context(), fmt.Sprintf("user%d@example.com", writes), "hash", false); err != nil {
		t.Fatalf("write: %v", err)
	}
	return s
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("stat %s: %v", filepath.Base(path), err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s mode = %#o; want %#o", filepath.Base(path), got, want)
	}
}
