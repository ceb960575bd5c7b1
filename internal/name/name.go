// Package name checks the names people give things (send rules, datasets,
// accounts, stages): printable, valid UTF-8 text of a bounded length.
package name

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest name, in characters.
const MaxLen = 100

// Invisible reports whether r is a control character (C0, DEL, C1) or a
// format character (Unicode's Cf: bidi marks, embeddings, overrides and
// isolates, zero-width spaces, the byte-order mark, soft hyphens, tag
// characters). They are invisible, and written raw into a page or a CSV
// file they garble it or disguise text: a right-to-left override shows
// "gpj.exe" as "exe.jpg", tag characters smuggle hidden text. The joiners
// U+200C and U+200D stay: Persian words and emoji need them.
func Invisible(r rune) bool {
	if r == '\u200c' || r == '\u200d' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// Problem says what is wrong with s as a name, in words that fit after
// "name: ", or "" when it can be one: 1 to MaxLen characters of valid
// UTF-8, none of them invisible, with no space at either end. The caller
// trims what it wants trimmed first.
func Problem(s string) string {
	switch {
	case s == "":
		return "required"
	case !utf8.ValidString(s):
		return "use text only: this holds bytes that are not valid UTF-8"
	case utf8.RuneCountInString(s) > MaxLen:
		return fmt.Sprintf("use at most %d characters", MaxLen)
	case strings.TrimSpace(s) != s:
		return "remove the spaces at the start or end"
	}
	for _, r := range s {
		if Invisible(r) {
			return fmt.Sprintf("remove the invisible character %U: names take printable characters only", r)
		}
	}
	return ""
}

// Cut is s as a message quotes it: its first n characters, with an
// ellipsis when there were more. A careless sender's value can be
// megabytes long; a message repeats only its start.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
