package seal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b, err := New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	token := "EAAGm0PX4ZCpsBAKZBZCZAEXAMPLETOKEN"
	s1, s2 := b.Seal(token, "dataset:1:token"), b.Seal(token, "dataset:1:token")
	if s1 == s2 {
		t.Error("two seals of one value are equal; want a fresh nonce each time")
	}
	if strings.Contains(s1, token) {
		t.Error("sealed value contains the plaintext")
	}
	got, err := b.Open(s1, "dataset:1:token")
	if err != nil || got != token {
		t.Errorf("Open = %q, %v; want the token", got, err)
	}
	if _, err := b.Open(s1, "dataset:2:token"); !errors.Is(err, ErrOpen) {
		t.Errorf("Open with another label err = %v; want ErrOpen", err)
	}
	other, _ := New(bytes.Repeat([]byte{8}, 32))
	if _, err := other.Open(s1, "dataset:1:token"); !errors.Is(err, ErrOpen) {
		t.Errorf("Open with another key err = %v; want ErrOpen", err)
	}
	for _, bad := range []string{"", "v1:", "v1:!!!", "v2:abcd", s1[:len(s1)-2]} {
		if _, err := b.Open(bad, "dataset:1:token"); !errors.Is(err, ErrOpen) {
			t.Errorf("Open(%q) err = %v; want ErrOpen", bad, err)
		}
	}
	if _, err := New([]byte("short")); err == nil {
		t.Error("New(short key) succeeded")
	}
}
