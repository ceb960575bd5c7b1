package store

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm/schema"

	"github.com/leadsignal/leadsignal/models"
)

// The events deciding reads have every column of an event but its payload:
// a column added to events is read for deciding too.
func TestDecidedEventColumns(t *testing.T) {
	sch, err := schema.Parse(&models.Event{}, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range sch.Fields {
		if f.DBName != "" && f.Creatable && f.DBName != "payload" {
			want = append(want, f.DBName)
		}
	}
	var got []string
	for _, c := range strings.Split(decidedEventColumns, ",") {
		got = append(got, strings.TrimPrefix(strings.TrimSpace(c), "events."))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("decidedEventColumns = %v; want the events' stored columns but payload, %v", got, want)
	}
}
