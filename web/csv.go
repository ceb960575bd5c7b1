package web

import (
	"encoding/csv"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// csvDownload is a CSV file being written as the answer: every cell is
// made safe to open in a spreadsheet (csvSafe).
type csvDownload struct{ w *csv.Writer }

// startCSV answers 200 with a CSV attachment named name and returns its
// writer.
func startCSV(c echo.Context, name string) *csvDownload {
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	res.Header().Set(echo.HeaderCacheControl, "no-store")
	res.WriteHeader(http.StatusOK)
	return &csvDownload{w: csv.NewWriter(res)}
}

// Write writes one row, its cells made safe.
func (d *csvDownload) Write(row []string) error {
	safe := make([]string, len(row))
	for i, s := range row {
		safe[i] = csvSafe(s)
	}
	return d.w.Write(safe)
}

// Close flushes the file; err, the writing's own error, comes first.
func (d *csvDownload) Close(err error) error {
	d.w.Flush()
	if err != nil {
		return err
	}
	return d.w.Error()
}

// csvSafe stops a spreadsheet from running a cell as a formula: a value
// that starts like one gets a leading apostrophe.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
