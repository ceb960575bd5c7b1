//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// A person who starts serve in a terminal reads where to open it: the
// setup of the first admin on a fresh install, the sign-in once there is
// a user.
func TestServeTellsTerminalWhereToOpen(t *testing.T) {
	t.Parallel()
	d := sqliteDB(t)
	for _, tt := range []struct {
		name string
		want string
	}{
		{"fresh install", "(open it in a browser; the first visit sets up the admin)"},
		{"with a user", "(open it in a browser and sign in)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "with a user" {
				d.mustRun(t, testPassword+"\n", "user", "create", "--email", "a@example.com", "--admin")
			}
			terminal, lines := pseudoTerminal(t)
			srv := startServeTo(t, d, terminal)
			want := "leadsignal is serving on http://" + srv.addr + " " + tt.want
			select {
			case line := <-lines:
				if line != want {
					t.Errorf("serve told the terminal %q; want %q", line, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("serve told the terminal nothing; want %q", want)
			}
		})
	}
}

// When stderr is no terminal (a log collector's pipe), serve writes only
// JSON records, and the "serving" one has the address to open as its url.
func TestServeLogsOnlyJSONForCollectors(t *testing.T) {
	t.Parallel()
	var stderr syncBuffer
	srv := startServeTo(t, sqliteDB(t), &stderr)
	srv.stop()
	if err := srv.wait(t, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if stderr.String() != "" {
		t.Errorf("serve wrote %q to a stderr that is no terminal; want nothing but JSON records on stdout", stderr.String())
	}
	url := ""
	for _, line := range strings.Split(strings.TrimSpace(srv.stdout.String()), "\n") {
		var rec struct{ Msg, URL string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("serve logged %q, which is not JSON: %v", line, err)
		}
		if rec.Msg == "serving" {
			url = rec.URL
		}
	}
	if want := "http://" + srv.addr; url != want {
		t.Errorf(`the "serving" record's url = %q; want %q`, url, want)
	}
}

// pseudoTerminal opens a pseudo-terminal and returns its terminal side,
// to stand for a person's stderr, and the lines written to it.
func pseudoTerminal(t *testing.T) (*os.File, <-chan string) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var n uint32
	unlock := int32(0)
	if err := ioctl(ptmx, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatalf("unlock pseudo-terminal: %v", err)
	}
	if err := ioctl(ptmx, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(ptmx)
		for sc.Scan() {
			lines <- strings.TrimRight(sc.Text(), "\r")
		}
	}()
	return tty, lines
}

func ioctl(f *os.File, req uint, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(req), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
