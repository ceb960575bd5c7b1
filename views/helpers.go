package views

import (
	"strconv"
	"strings"
)

func inputType(t string) string {
	if t == "" {
		return "text"
	}
	return t
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func joinComma(s []string) string { return strings.Join(s, ", ") }
