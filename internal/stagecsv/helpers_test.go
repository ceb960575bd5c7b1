package stagecsv_test

import "strconv"

func itoa(n int64) string   { return strconv.FormatInt(n, 10) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
