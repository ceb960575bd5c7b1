package views

import "strconv"

func inputType(t string) string {
	if t == "" {
		return "text"
	}
	return t
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
