package stagecsv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Limits of one upload: a file larger or longer is refused whole, with the
// limit named, before anything is read into rows.
const (
	MaxBytes   = 20 << 20
	MaxRows    = 100_000
	MaxColumns = 500
)

// FileError is why a whole file cannot be used; its message is for the
// person who uploaded it.
type FileError struct {
	Message string
}

func (e *FileError) Error() string { return e.Message }

func fileError(format string, args ...any) *FileError {
	return &FileError{Message: fmt.Sprintf(format, args...)}
}

// File is a CSV file of stage changes as read: its header and data rows.
type File struct {
	Header []string
	Rows   [][]string
	// Lines are the file's line numbers of Rows, the header being line 1:
	// the row numbers a spreadsheet shows, by which a row's problem is
	// reported.
	Lines []int
}

// Read checks and reads a CSV file. Its error is a *FileError: the file is
// empty, too large, binary or not UTF-8 (a UTF-8 byte order mark is fine),
// has no header row or no rows, more than MaxColumns columns or more than
// MaxRows rows. Fields may be
// separated by commas, semicolons or tabs (the first line decides); a row
// shorter than the header has empty cells at its end; a row whose cells are
// all empty is skipped. A quote that is never closed, or one inside a cell
// that does not start with one, refuses the file with its line: what
// follows it cannot be told apart into rows.
func Read(b []byte) (File, error) {
	var f File
	if len(b) > MaxBytes {
		return f, fileError("The file is %s; an upload is at most %d MiB. Split it into smaller files.", size(int64(len(b))), MaxBytes>>20)
	}
	switch {
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return f, fileError("This is a spreadsheet workbook (.xlsx), not a CSV file: save it as \"CSV UTF-8\" and upload that.")
	case bytes.HasPrefix(b, []byte("%PDF")):
		return f, fileError("This is a PDF, not a CSV file.")
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return f, fileError("The file is saved as UTF-16 (\"Unicode text\"): save it as \"CSV UTF-8\" and upload that.")
	}
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	if len(bytes.TrimSpace(b)) == 0 {
		return f, fileError("The file is empty: it needs a header row naming the columns and a row per stage change.")
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return f, fileError("The file holds a NUL byte on line %d, so it is not a CSV text file (a binary file, or one saved as UTF-16): save it as \"CSV UTF-8\".", lineAt(b, i))
	}
	if !utf8.Valid(b) {
		return f, fileError("The file is not UTF-8 text (line %d has a character in another encoding): save it as \"CSV UTF-8\" and upload that.", lineAt(b, invalidAt(b)))
	}

	r := csv.NewReader(bytes.NewReader(b))
	r.Comma = separator(b)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return f, parseError(err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	if blank(header) {
		return f, fileError("The first row is empty: it must name the columns, like email,stage,occurred_at.")
	}
	if len(header) < 3 {
		return f, fileError("The first row names %d column(s) (%q), and a stage change needs at least three: a lead key (like email), the stage and its date. Is the file a CSV separated by commas, semicolons or tabs?",
			len(header), strings.Join(header, ","))
	}
	if len(header) > MaxColumns {
		return f, fileError("The first row names %s columns; an upload reads at most %d. Export only the columns it needs (the contact's email or phone, the stage, its dates, the amount and currency) and upload that.",
			thousands(len(header)), MaxColumns)
	}
	if looksLikeData(header) {
		return f, fileError("The first row holds values (%s), not column names: add a header row naming the columns, like email,stage,occurred_at.", quoteList(header, 3))
	}
	f.Header = header
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return File{}, parseError(err)
		}
		if blank(rec) {
			continue
		}
		if len(f.Rows) == MaxRows {
			return File{}, fileError("The file has more than %s rows; an upload is at most %s. Split it into smaller files.", thousands(MaxRows), thousands(MaxRows))
		}
		line, _ := r.FieldPos(0)
		f.Rows = append(f.Rows, rec)
		f.Lines = append(f.Lines, line)
	}
	if len(f.Rows) == 0 {
		return File{}, fileError("The file has a header row and no stage changes under it.")
	}
	return f, nil
}

// Cell is row's cell of column col, trimmed; "" for a row too short or no
// column (col < 0).
func Cell(row []string, col int) string {
	if col < 0 || col >= len(row) {
		return ""
	}
	return strings.TrimSpace(row[col])
}

// separator is the field separator of the first line: the most frequent of
// comma, semicolon and tab outside quotes (comma when none).
func separator(b []byte) rune {
	counts := map[rune]int{}
	quoted := false
	for _, c := range string(b) {
		if c == '"' {
			quoted = !quoted
			continue
		}
		if !quoted && (c == '\n' || c == '\r') {
			break
		}
		if !quoted && (c == ',' || c == ';' || c == '\t') {
			counts[c]++
		}
	}
	best := ','
	for _, c := range []rune{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

func parseError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fileError("The file is not a CSV file that can be read: line %d: %v.", pe.StartLine, pe.Err)
	}
	return fileError("The file is not a CSV file that can be read: %v.", err)
}

func blank(rec []string) bool {
	for _, s := range rec {
		if strings.TrimSpace(s) != "" {
			return false
		}
	}
	return true
}

// looksLikeData reports whether a header row holds values rather than
// names: no cell is a known column name, and one looks like an email
// address, a date or a number.
func looksLikeData(header []string) bool {
	for _, h := range header {
		// A status name ("Won") is also a value of a stage column.
		if t, ok := aliases[fold(h)]; ok && t != Status {
			return false
		}
	}
	for _, h := range header {
		if strings.Contains(h, "@") || dateLike.MatchString(h) || numberLike.MatchString(h) {
			return true
		}
	}
	return false
}

func lineAt(b []byte, i int) int { return bytes.Count(b[:i], []byte("\n")) + 1 }

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

func quoteList(ss []string, max int) string {
	var q []string
	for i, s := range ss {
		if i == max {
			q = append(q, "…")
			break
		}
		q = append(q, fmt.Sprintf("%q", s))
	}
	return strings.Join(q, ", ")
}

func size(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
